//! An account's `REQUIRE SSL | X509 | ISSUER '..' | SUBJECT '..' | CIPHER '..' | NONE`:
//! what it asks of a connection's TLS session, how SHOW CREATE USER / SHOW GRANTS print
//! it, and the login check (MariaDB's `acl_check_ssl`).
//!
//! Stored in `mysql.onelog_user` as MariaDB stores it in `mysql.user`: `Ssl_type` is
//! `''`, `ANY`, `X509` or `SPECIFIED`; `Ssl_cipher`, `X509_issuer`, `X509_subject` hold the
//! strings of a `SPECIFIED` requirement (empty when not given).

use onelog_types::{code, SqlError};

use crate::sql_err;

/// The clause as written (the parser's output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequireClause {
    None,
    Ssl,
    X509,
    /// `ISSUER 'x' [AND] SUBJECT 'y' [AND] CIPHER 'z'`, in written order.
    Specified(Vec<(RequireItem, String)>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequireItem {
    Issuer,
    Subject,
    Cipher,
}

impl RequireItem {
    fn name(self) -> &'static str {
        match self {
            RequireItem::Issuer => "ISSUER",
            RequireItem::Subject => "SUBJECT",
            RequireItem::Cipher => "CIPHER",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslType {
    #[default]
    None,
    /// `REQUIRE SSL`: any TLS connection.
    Any,
    /// `REQUIRE X509`: TLS with a client certificate verified against `--ssl-ca`.
    X509,
    /// `REQUIRE ISSUER/SUBJECT/CIPHER`: TLS with the given cipher, and a verified client
    /// certificate with the given issuer and subject when either is given.
    Specified,
}

/// An account's TLS requirement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SslRequire {
    pub ty: SslType,
    pub cipher: String,
    pub issuer: String,
    pub subject: String,
}

/// What a connection's TLS session established (the server fills it in after the TLS
/// handshake).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerTls {
    /// `TLSv1.2`, `TLSv1.3` (OpenSSL's names, as `Ssl_version` shows them).
    pub version: String,
    /// The negotiated cipher suite by OpenSSL's name (as `Ssl_cipher` shows it).
    pub cipher: String,
    /// Issuer and subject of the client certificate in OpenSSL's one-line form
    /// (`/C=FI/O=Org/CN=name`), when the client sent one and it verified against `--ssl-ca`.
    pub cert: Option<CertNames>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertNames {
    pub issuer: String,
    pub subject: String,
}

impl SslRequire {
    /// The requirement a clause sets (an unnamed item of a `SPECIFIED` one is empty);
    /// 1225 when an item is given twice.
    pub fn from_clause(c: &RequireClause) -> Result<SslRequire, SqlError> {
        let mut r = SslRequire::default();
        match c {
            RequireClause::None => {}
            RequireClause::Ssl => r.ty = SslType::Any,
            RequireClause::X509 => r.ty = SslType::X509,
            RequireClause::Specified(items) => {
                r.ty = SslType::Specified;
                let mut seen = Vec::new();
                for (item, v) in items {
                    if seen.contains(item) {
                        return Err(sql_err(
                            code::ER_DUP_ARGUMENT,
                            format!("Option '{}' used twice in statement", item.name()),
                        ));
                    }
                    seen.push(*item);
                    let slot = match item {
                        RequireItem::Issuer => &mut r.issuer,
                        RequireItem::Subject => &mut r.subject,
                        RequireItem::Cipher => &mut r.cipher,
                    };
                    *slot = v.clone();
                }
            }
        }
        Ok(r)
    }

    /// ` REQUIRE ...` as SHOW CREATE USER and SHOW GRANTS print it (empty for none).
    pub fn clause(&self) -> String {
        match self.ty {
            SslType::None => String::new(),
            SslType::Any => " REQUIRE SSL".into(),
            SslType::X509 => " REQUIRE X509".into(),
            SslType::Specified => {
                let mut s = " REQUIRE ".to_string();
                let parts: Vec<String> = [
                    ("ISSUER", &self.issuer),
                    ("SUBJECT", &self.subject),
                    ("CIPHER", &self.cipher),
                ]
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| format!("{k} {}", quote(v)))
                .collect();
                s.push_str(&parts.join(" "));
                s
            }
        }
    }

    /// Whether a connection with `tls` (None: not TLS) meets the requirement.
    pub fn admits(&self, tls: Option<&PeerTls>) -> bool {
        match self.ty {
            SslType::None => true,
            SslType::Any => tls.is_some(),
            SslType::X509 => tls.is_some_and(|t| t.cert.is_some()),
            SslType::Specified => {
                let Some(t) = tls else { return false };
                if !self.cipher.is_empty() && self.cipher != t.cipher {
                    return false;
                }
                if self.issuer.is_empty() && self.subject.is_empty() {
                    return true;
                }
                let Some(c) = &t.cert else { return false };
                (self.issuer.is_empty() || self.issuer == c.issuer)
                    && (self.subject.is_empty() || self.subject == c.subject)
            }
        }
    }

    /// The `Ssl_type` column value.
    pub(crate) fn type_name(&self) -> &'static str {
        match self.ty {
            SslType::None => "",
            SslType::Any => "ANY",
            SslType::X509 => "X509",
            SslType::Specified => "SPECIFIED",
        }
    }

    /// From the stored columns (an unknown type reads as none).
    pub(crate) fn from_stored(ty: &str, cipher: String, issuer: String, subject: String) -> Self {
        let ty = match ty {
            "ANY" => SslType::Any,
            "X509" => SslType::X509,
            "SPECIFIED" => SslType::Specified,
            _ => SslType::None,
        };
        if ty != SslType::Specified {
            return SslRequire {
                ty,
                ..Default::default()
            };
        }
        SslRequire {
            ty,
            cipher,
            issuer,
            subject,
        }
    }
}

/// A string as MariaDB prints it in a REQUIRE clause: `\` doubled, `'` as `''`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(cipher: &str, cert: Option<(&str, &str)>) -> PeerTls {
        PeerTls {
            version: "TLSv1.3".into(),
            cipher: cipher.into(),
            cert: cert.map(|(i, s)| CertNames {
                issuer: i.into(),
                subject: s.into(),
            }),
        }
    }

    #[test]
    fn clauses_print_as_mariadb() {
        let spec = |items: &[(RequireItem, &str)]| {
            SslRequire::from_clause(&RequireClause::Specified(
                items.iter().map(|(i, v)| (*i, v.to_string())).collect(),
            ))
        };
        use RequireItem::*;
        assert_eq!(
            spec(&[(Cipher, "AES"), (Subject, "/CN=cl"), (Issuer, "/CN=ca")])
                .unwrap()
                .clause(),
            " REQUIRE ISSUER '/CN=ca' SUBJECT '/CN=cl' CIPHER 'AES'"
        );
        assert_eq!(
            spec(&[(Cipher, "it's a\\b")]).unwrap().clause(),
            " REQUIRE CIPHER 'it''s a\\\\b'"
        );
        // MariaDB prints a SPECIFIED requirement of empty strings as "REQUIRE ".
        assert_eq!(spec(&[(Subject, "")]).unwrap().clause(), " REQUIRE ");
        let e = spec(&[(Cipher, "a"), (Cipher, "b")]).unwrap_err();
        assert_eq!(e.code, 1225);
        assert_eq!(e.message, "Option 'CIPHER' used twice in statement");
        let ssl = SslRequire::from_clause(&RequireClause::Ssl).unwrap();
        assert_eq!(ssl.clause(), " REQUIRE SSL");
        assert_eq!(
            SslRequire::from_clause(&RequireClause::None)
                .unwrap()
                .clause(),
            ""
        );
    }

    #[test]
    fn login_checks() {
        let none = SslRequire::default();
        assert!(none.admits(None));
        let ssl = SslRequire::from_clause(&RequireClause::Ssl).unwrap();
        assert!(!ssl.admits(None));
        assert!(ssl.admits(Some(&tls("TLS_AES_256_GCM_SHA384", None))));
        let x509 = SslRequire::from_clause(&RequireClause::X509).unwrap();
        assert!(!x509.admits(Some(&tls("c", None))));
        assert!(x509.admits(Some(&tls("c", Some(("/CN=ca", "/CN=u"))))));
        let spec = SslRequire::from_clause(&RequireClause::Specified(vec![
            (RequireItem::Subject, "/CN=u".into()),
            (RequireItem::Cipher, "c".into()),
        ]))
        .unwrap();
        assert!(spec.admits(Some(&tls("c", Some(("/CN=any", "/CN=u"))))));
        assert!(!spec.admits(Some(&tls("d", Some(("/CN=any", "/CN=u"))))));
        assert!(!spec.admits(Some(&tls("c", Some(("/CN=any", "/CN=v"))))));
        assert!(!spec.admits(Some(&tls("c", None))));
        assert!(!spec.admits(None));
        // Only a cipher (or nothing) named: no certificate needed, as in MariaDB 10.11.
        let cipher = SslRequire::from_clause(&RequireClause::Specified(vec![(
            RequireItem::Cipher,
            "c".into(),
        )]))
        .unwrap();
        assert!(cipher.admits(Some(&tls("c", None))));
        assert!(!cipher.admits(Some(&tls("d", None))));
        assert!(!cipher.admits(None));
        let stored = SslRequire::from_stored(
            spec.type_name(),
            spec.cipher.clone(),
            spec.issuer.clone(),
            spec.subject.clone(),
        );
        assert_eq!(stored, spec);
    }
}
