//! The issuer and subject of an X.509 certificate in OpenSSL's one-line form
//! (`X509_NAME_oneline`: `/C=FI/O=Org/CN=name`), which MariaDB compares with an account's
//! `REQUIRE ISSUER` / `REQUIRE SUBJECT`.
//!
//! Only the DER structure up to the subject is read:
//! `Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL,
//! serialNumber INTEGER, signature SEQUENCE, issuer Name, validity SEQUENCE, subject Name,
//! ... }, ... }`, `Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY }`.
//! Each attribute prints as `/` + OpenSSL's short name of its type (the dotted OID when it
//! has none) + `=` + the value's bytes, those outside `' '..='~'` as `\xHH` (upper-case
//! hex); a GeneralString whose length is a multiple of 4 and whose bytes other than every
//! fourth are all zero prints only every fourth byte (OpenSSL's rule).

/// (issuer, subject) of a DER certificate; None if it is not one.
pub fn issuer_and_subject(der: &[u8]) -> Option<(String, String)> {
    let (tag, cert, _) = tlv(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, _) = tlv(cert)?;
    if tag != SEQUENCE {
        return None;
    }
    let mut rest = tbs;
    let (tag, _, r) = tlv(rest)?;
    if tag == 0xA0 {
        rest = r; // [0] version
    }
    let (_, _, r) = tlv(rest)?; // serialNumber
    let (_, _, r) = tlv(r)?; // signature
    let (tag, issuer, r) = tlv(r)?;
    if tag != SEQUENCE {
        return None;
    }
    let (_, _, r) = tlv(r)?; // validity
    let (tag, subject, _) = tlv(r)?;
    if tag != SEQUENCE {
        return None;
    }
    Some((oneline(issuer)?, oneline(subject)?))
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;
const GENERAL_STRING: u8 = 0x1B;

/// One DER element: (tag, contents, what follows). Single-byte tags only (all a
/// certificate's name needs).
fn tlv(buf: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = buf.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The contents of a Name (the SEQUENCE OF RDNs) in one-line form.
fn oneline(mut rdns: &[u8]) -> Option<String> {
    let mut out = String::new();
    while !rdns.is_empty() {
        let (tag, mut set, r) = tlv(rdns)?;
        rdns = r;
        if tag != SET {
            return None;
        }
        while !set.is_empty() {
            let (tag, atv, r) = tlv(set)?;
            set = r;
            if tag != SEQUENCE {
                return None;
            }
            let (tag, oid, r) = tlv(atv)?;
            if tag != OID {
                return None;
            }
            let (vtag, value, _) = tlv(r)?;
            out.push('/');
            let dotted = oid_text(oid)?;
            out.push_str(short_name(&dotted).unwrap_or(&dotted));
            out.push('=');
            push_value(&mut out, vtag, value);
        }
    }
    Some(out)
}

fn push_value(out: &mut String, tag: u8, v: &[u8]) {
    let mut keep = [true; 4];
    if tag == GENERAL_STRING && v.len() & 3 == 0 {
        let mut nonzero = [false; 4];
        for (j, &b) in v.iter().enumerate() {
            if b != 0 {
                nonzero[j & 3] = true;
            }
        }
        if !(nonzero[0] || nonzero[1] || nonzero[2]) {
            keep = [false, false, false, true];
        }
    }
    for (j, &b) in v.iter().enumerate() {
        if !keep[j & 3] {
            continue;
        }
        if (b' '..=b'~').contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
}

/// An OID's dotted text.
fn oid_text(oid: &[u8]) -> Option<String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut cur: u64 = 0;
    for (i, &b) in oid.iter().enumerate() {
        cur = cur.checked_mul(128)? | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (cur / 40).min(2);
                arcs.push(first);
                arcs.push(cur - first * 40);
            } else {
                arcs.push(cur);
            }
            cur = 0;
        } else if i + 1 == oid.len() {
            return None;
        }
    }
    if arcs.is_empty() {
        return None;
    }
    Some(
        arcs.iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// OpenSSL's short names of the attribute types found in certificate names.
fn short_name(dotted: &str) -> Option<&'static str> {
    Some(match dotted {
        "2.5.4.3" => "CN",
        "2.5.4.4" => "SN",
        "2.5.4.5" => "serialNumber",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.9" => "street",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.12" => "title",
        "2.5.4.13" => "description",
        "2.5.4.15" => "businessCategory",
        "2.5.4.17" => "postalCode",
        "2.5.4.41" => "name",
        "2.5.4.42" => "GN",
        "2.5.4.43" => "initials",
        "2.5.4.44" => "generationQualifier",
        "2.5.4.45" => "x500UniqueIdentifier",
        "2.5.4.46" => "dnQualifier",
        "2.5.4.65" => "pseudonym",
        "2.5.4.97" => "organizationIdentifier",
        "1.2.840.113549.1.9.1" => "emailAddress",
        "1.2.840.113549.1.9.2" => "unstructuredName",
        "0.9.2342.19200300.100.1.1" => "UID",
        "0.9.2342.19200300.100.1.25" => "DC",
        "1.3.6.1.4.1.311.60.2.1.1" => "jurisdictionL",
        "1.3.6.1.4.1.311.60.2.1.2" => "jurisdictionST",
        "1.3.6.1.4.1.311.60.2.1.3" => "jurisdictionC",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn der(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        if content.len() < 0x80 {
            v.push(content.len() as u8);
        } else {
            v.push(0x82);
            v.extend_from_slice(&(content.len() as u16).to_be_bytes());
        }
        v.extend_from_slice(content);
        v
    }

    fn attr(oid: &[u8], tag: u8, value: &[u8]) -> Vec<u8> {
        let mut atv = der(OID, oid);
        atv.extend(der(tag, value));
        der(SET, &der(SEQUENCE, &atv))
    }

    fn name(attrs: &[Vec<u8>]) -> Vec<u8> {
        der(SEQUENCE, &attrs.concat())
    }

    #[test]
    fn names_in_openssl_oneline_form() {
        const CN: &[u8] = &[0x55, 0x04, 0x03];
        const C: &[u8] = &[0x55, 0x04, 0x06];
        const EMAIL: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01];
        const UNKNOWN: &[u8] = &[0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x01];
        let issuer = name(&[attr(C, 0x13, b"FI"), attr(CN, 0x0C, b"onelog CA")]);
        let subject = name(&[
            attr(CN, 0x0C, "J\u{e4}rvi/x".as_bytes()),
            attr(EMAIL, 0x16, b"a@b.c"),
            attr(UNKNOWN, 0x0C, b"v"),
            attr(CN, GENERAL_STRING, b"\0\0\0A\0\0\0B"),
        ]);
        let mut tbs = der(0xA0, &der(0x02, &[2]));
        tbs.extend(der(0x02, &[1, 2, 3]));
        tbs.extend(der(SEQUENCE, &der(OID, &[0x2A, 0x86, 0x48])));
        tbs.extend(issuer);
        tbs.extend(der(SEQUENCE, &[0x17, 0x01, b'0', 0x17, 0x01, b'0']));
        tbs.extend(subject);
        tbs.extend(der(SEQUENCE, &[0u8; 200])); // a long element (two-byte length)
        let mut cert = der(SEQUENCE, &tbs);
        cert.extend(der(SEQUENCE, &[]));
        let cert = der(SEQUENCE, &cert);
        let (i, s) = issuer_and_subject(&cert).unwrap();
        assert_eq!(i, "/C=FI/CN=onelog CA");
        assert_eq!(
            s,
            "/CN=J\\xC3\\xA4rvi/x/emailAddress=a@b.c/1.3.6.1.4.1.311.1=v/CN=AB"
        );
        assert!(issuer_and_subject(&cert[..cert.len() - 3]).is_none());
        assert!(issuer_and_subject(b"").is_none());
    }
}
