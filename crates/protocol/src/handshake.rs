//! Connection phase: the server's Initial Handshake v10, the client's SSLRequest and
//! HandshakeResponse41, AuthSwitchRequest, and `mysql_native_password`.
//!
//! Flow (server side), sequence ids in brackets:
//! ```text
//! S [0] Initial Handshake v10
//! C [1] SSLRequest                       (only with CLIENT_SSL; then TLS starts)
//! C [1|2] HandshakeResponse41
//! S      AuthSwitchRequest               (when the client used another plugin)
//! C      auth data for the new plugin
//! S      OK | ERR
//! ```

use crate::codec::{lossy, put_null_str, put_u16, put_u32, Reader};
use crate::error::{ProtocolError, Result};
use onelog_types::{code, SqlError};
use sha1::{Digest, Sha1};

/// Capability flags (`CLIENT_*`); bits 32..63 are MariaDB's extended capabilities.
pub mod capability {
    /// Bit 0: set by MySQL and old MariaDB; a MariaDB 10.2+ server leaves it clear, which
    /// tells clients that the extended capabilities below are exchanged.
    pub const CLIENT_MYSQL: u64 = 1;
    pub const CLIENT_FOUND_ROWS: u64 = 2;
    pub const CLIENT_LONG_FLAG: u64 = 4;
    pub const CLIENT_CONNECT_WITH_DB: u64 = 8;
    pub const CLIENT_NO_SCHEMA: u64 = 16;
    pub const CLIENT_COMPRESS: u64 = 32;
    pub const CLIENT_ODBC: u64 = 64;
    pub const CLIENT_LOCAL_FILES: u64 = 128;
    pub const CLIENT_IGNORE_SPACE: u64 = 256;
    pub const CLIENT_PROTOCOL_41: u64 = 512;
    pub const CLIENT_INTERACTIVE: u64 = 1024;
    pub const CLIENT_SSL: u64 = 2048;
    pub const CLIENT_IGNORE_SIGPIPE: u64 = 4096;
    pub const CLIENT_TRANSACTIONS: u64 = 8192;
    pub const CLIENT_RESERVED: u64 = 16384;
    pub const CLIENT_SECURE_CONNECTION: u64 = 32768;
    pub const CLIENT_MULTI_STATEMENTS: u64 = 1 << 16;
    pub const CLIENT_MULTI_RESULTS: u64 = 1 << 17;
    pub const CLIENT_PS_MULTI_RESULTS: u64 = 1 << 18;
    pub const CLIENT_PLUGIN_AUTH: u64 = 1 << 19;
    pub const CLIENT_CONNECT_ATTRS: u64 = 1 << 20;
    pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u64 = 1 << 21;
    pub const CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS: u64 = 1 << 22;
    pub const CLIENT_SESSION_TRACK: u64 = 1 << 23;
    pub const CLIENT_DEPRECATE_EOF: u64 = 1 << 24;
    pub const CLIENT_SSL_VERIFY_SERVER_CERT: u64 = 1 << 30;
    pub const CLIENT_REMEMBER_OPTIONS: u64 = 1 << 31;
    pub const MARIADB_CLIENT_PROGRESS: u64 = 1 << 32;
    pub const MARIADB_CLIENT_COM_MULTI: u64 = 1 << 33;
    pub const MARIADB_CLIENT_STMT_BULK_OPERATIONS: u64 = 1 << 34;
    pub const MARIADB_CLIENT_EXTENDED_METADATA: u64 = 1 << 35;
    pub const MARIADB_CLIENT_CACHE_METADATA: u64 = 1 << 36;
}

use capability::*;

/// The version string onelog announces: connectors strip `5.5.5-` and see MariaDB 10.11.
pub const DEFAULT_SERVER_VERSION: &str = "5.5.5-10.11.99-MariaDB-onelog";
/// The only authentication plugin onelog implements.
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";
pub const SCRAMBLE_LEN: usize = 20;

/// The capabilities onelog's server announces. Not announced: CLIENT_MYSQL (we are
/// MariaDB), COMPRESS, DEPRECATE_EOF (classic EOF packets are used). Of MariaDB's extended
/// capabilities, STMT_BULK_OPERATIONS (COM_STMT_BULK_EXECUTE, `bulk.rs`). SESSION_TRACK: OK packets carry the session state changes
/// (`sql/session/track.rs`) to clients that set it. LOCAL_FILES: LOAD DATA LOCAL INFILE works
/// with clients that announce it too.
///
/// CLIENT_FOUND_ROWS is announced: when a client sets it, UPDATE must report matched rows
/// instead of changed rows as affected rows.
pub fn server_capabilities(ssl: bool) -> u64 {
    let mut c = CLIENT_FOUND_ROWS
        | CLIENT_LONG_FLAG
        | CLIENT_CONNECT_WITH_DB
        | CLIENT_NO_SCHEMA
        | CLIENT_ODBC
        | CLIENT_LOCAL_FILES
        | CLIENT_IGNORE_SPACE
        | CLIENT_PROTOCOL_41
        | CLIENT_INTERACTIVE
        | CLIENT_IGNORE_SIGPIPE
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_MULTI_STATEMENTS
        | CLIENT_MULTI_RESULTS
        | CLIENT_PS_MULTI_RESULTS
        | CLIENT_PLUGIN_AUTH
        | CLIENT_CONNECT_ATTRS
        | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CLIENT_SESSION_TRACK
        | MARIADB_CLIENT_STMT_BULK_OPERATIONS;
    if ssl {
        c |= CLIENT_SSL;
    }
    c
}

/// A fresh 20-byte scramble of printable ASCII characters without NUL or quote issues,
/// as MariaDB generates.
pub fn new_scramble() -> [u8; SCRAMBLE_LEN] {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    let mut s = [0u8; SCRAMBLE_LEN];
    for b in &mut s {
        *b = rng.gen_range(0x21u8..=0x7e);
    }
    s
}

/// The server's first packet.
#[derive(Clone, Debug)]
pub struct InitialHandshake<'a> {
    pub server_version: &'a str,
    pub connection_id: u32,
    pub scramble: [u8; SCRAMBLE_LEN],
    /// Server capabilities (see [`server_capabilities`]); bits 32..63 are MariaDB's.
    pub capabilities: u64,
    /// Low byte of the server's default collation id (45 = utf8mb4_general_ci).
    pub collation: u8,
    /// Server status flags (usually SERVER_STATUS_AUTOCOMMIT).
    pub status: u16,
    pub auth_plugin: &'a str,
}

impl InitialHandshake<'_> {
    /// Encodes the payload.
    /// ```text
    /// 0x0a protocol version | server_version NUL | connection_id u32 |
    /// scramble[0..8] | 0x00 | capabilities[0..16] u16 | collation u8 | status u16 |
    /// capabilities[16..32] u16 | auth_plugin_data_len u8 (21) | 6 x 0x00 |
    /// MariaDB capabilities[32..64] u32 (zero when CLIENT_MYSQL is set) |
    /// scramble[8..20] + 0x00 | auth_plugin_name NUL
    /// ```
    pub fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(10);
        put_null_str(buf, self.server_version.as_bytes());
        put_u32(buf, self.connection_id);
        buf.extend_from_slice(&self.scramble[..8]);
        buf.push(0);
        put_u16(buf, self.capabilities as u16);
        buf.push(self.collation);
        put_u16(buf, self.status);
        put_u16(buf, (self.capabilities >> 16) as u16);
        buf.push(if self.capabilities & CLIENT_PLUGIN_AUTH != 0 {
            SCRAMBLE_LEN as u8 + 1
        } else {
            0
        });
        buf.extend_from_slice(&[0; 6]);
        if self.capabilities & CLIENT_MYSQL != 0 {
            put_u32(buf, 0);
        } else {
            put_u32(buf, (self.capabilities >> 32) as u32);
        }
        buf.extend_from_slice(&self.scramble[8..]);
        buf.push(0);
        put_null_str(buf, self.auth_plugin.as_bytes());
    }
}

/// The client's answer to the initial handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// Client capabilities as sent, MariaDB extended capabilities in bits 32..63.
    pub capabilities: u64,
    pub max_packet_size: u32,
    /// Collation id the client asked for (e.g. 45 utf8mb4_general_ci, 33 utf8_general_ci,
    /// 8 latin1_swedish_ci, 224 utf8mb4_unicode_ci).
    pub collation: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    /// Plugin that produced `auth_response` (None without CLIENT_PLUGIN_AUTH, meaning
    /// mysql_native_password).
    pub auth_plugin: Option<String>,
    pub attributes: Vec<(String, String)>,
}

impl HandshakeResponse {
    /// Whether the server must send an AuthSwitchRequest to mysql_native_password.
    pub fn needs_auth_switch(&self) -> bool {
        match &self.auth_plugin {
            Some(p) => p != NATIVE_PASSWORD_PLUGIN,
            None => false,
        }
    }
}

/// What the client sent after the initial handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientHello {
    /// SSLRequest: switch the stream to TLS, then read the real response.
    SslRequest {
        capabilities: u64,
        max_packet_size: u32,
        collation: u8,
    },
    Response(HandshakeResponse),
}

/// Reads the connection attributes that end a handshake response or COM_CHANGE_USER
/// (`lenenc total | (lenenc key, lenenc value)*`), when the client announced them.
pub(crate) fn connect_attributes(r: &mut Reader<'_>, caps: u64) -> Result<Vec<(String, String)>> {
    let mut attributes = Vec::new();
    if caps & CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
        let total = r.lenenc_int()?;
        if total > r.remaining() as u64 {
            return Err(ProtocolError::Malformed("truncated connection attributes"));
        }
        let mut a = Reader::new(r.take(total as usize)?);
        while !a.is_empty() {
            let k = lossy(a.lenenc_bytes()?);
            let v = lossy(a.lenenc_bytes()?);
            attributes.push((k, v));
        }
    }
    Ok(attributes)
}

/// Parses an SSLRequest or a HandshakeResponse41.
/// ```text
/// capabilities u32 | max_packet_size u32 | collation u8 | 19 x filler |
/// MariaDB capabilities u32 (filler when the client sets CLIENT_MYSQL)
///   -- an SSLRequest ends here (32 bytes) --
/// user NUL |
/// auth_response: lenenc (PLUGIN_AUTH_LENENC_CLIENT_DATA) | u8 len (SECURE_CONNECTION) | NUL |
/// [database NUL]      if CONNECT_WITH_DB |
/// [plugin name NUL]   if PLUGIN_AUTH |
/// [attrs: lenenc total, then (lenenc key, lenenc value)*] if CONNECT_ATTRS
/// ```
/// Trailing optional fields that are missing are tolerated (read as absent).
pub fn parse_handshake_response(payload: &[u8]) -> Result<ClientHello> {
    let mut r = Reader::new(payload);
    let mut caps = r.u32()? as u64;
    if caps & CLIENT_PROTOCOL_41 == 0 {
        return Err(ProtocolError::Malformed(
            "pre-4.1 handshake responses are not supported",
        ));
    }
    let max_packet_size = r.u32()?;
    let collation = r.u8()?;
    r.skip(19)?;
    let ext = r.u32()?;
    if caps & CLIENT_MYSQL == 0 {
        caps |= (ext as u64) << 32;
    }
    if r.is_empty() {
        if caps & CLIENT_SSL != 0 {
            return Ok(ClientHello::SslRequest {
                capabilities: caps,
                max_packet_size,
                collation,
            });
        }
        return Err(ProtocolError::Malformed("handshake response without user"));
    }
    let user = lossy(r.null_terminated_or_rest());
    let auth_response = if r.is_empty() {
        Vec::new()
    } else if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes()?.to_vec()
    } else if caps & CLIENT_SECURE_CONNECTION != 0 {
        r.u8_prefixed()?.to_vec()
    } else {
        r.null_terminated_or_rest().to_vec()
    };
    let database = if caps & CLIENT_CONNECT_WITH_DB != 0 && !r.is_empty() {
        Some(lossy(r.null_terminated_or_rest())).filter(|d| !d.is_empty())
    } else {
        None
    };
    let auth_plugin = if caps & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        Some(lossy(r.null_terminated_or_rest()))
    } else {
        None
    };
    let attributes = connect_attributes(&mut r, caps)?;
    Ok(ClientHello::Response(HandshakeResponse {
        capabilities: caps,
        max_packet_size,
        collation,
        user,
        auth_response,
        database,
        auth_plugin,
        attributes,
    }))
}

/// AuthSwitchRequest: `0xFE | plugin name NUL | plugin data` (for mysql_native_password
/// the data is the 20-byte scramble followed by NUL, as MariaDB sends it).
pub fn encode_auth_switch_request(buf: &mut Vec<u8>, plugin: &str, data: &[u8]) {
    buf.push(0xFE);
    put_null_str(buf, plugin.as_bytes());
    buf.extend_from_slice(data);
}

/// The AuthSwitchRequest to mysql_native_password with `scramble`.
pub fn native_auth_switch_request(scramble: &[u8; SCRAMBLE_LEN]) -> Vec<u8> {
    let mut data = scramble.to_vec();
    data.push(0);
    let mut buf = Vec::new();
    encode_auth_switch_request(&mut buf, NATIVE_PASSWORD_PLUGIN, &data);
    buf
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// What MariaDB's `PASSWORD(pw)` returns: `*` + upper-case hex of SHA1(SHA1(pw)); the
/// empty password hashes to the empty string.
pub fn password_hash(password: &str) -> String {
    if password.is_empty() {
        return String::new();
    }
    let h = sha1(&[&sha1(&[password.as_bytes()])]);
    let mut s = String::with_capacity(41);
    s.push('*');
    for b in h {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// Parses a stored `*HEX` hash into SHA1(SHA1(pw)).
fn parse_stored_hash(stored: &str) -> Option<[u8; 20]> {
    let hex = stored.strip_prefix('*')?;
    if hex.len() != 40 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The client's side of mysql_native_password:
/// `SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))`, empty for an empty password.
pub fn native_password_token(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1(&[password]);
    let h2 = sha1(&[&h1]);
    let x = sha1(&[scramble, &h2]);
    h1.iter().zip(x).map(|(a, b)| a ^ b).collect()
}

/// Checks a mysql_native_password `token` against the stored hash (`""` for no password,
/// otherwise `*HEX` of SHA1(SHA1(pw))): recovers SHA1(pw) = token XOR SHA1(scramble +
/// stored) and checks that its SHA1 is the stored hash.
pub fn verify_native_password(scramble: &[u8], token: &[u8], stored: &str) -> bool {
    if stored.is_empty() {
        return token.is_empty();
    }
    let Some(h2) = parse_stored_hash(stored) else {
        return false;
    };
    if token.len() != SCRAMBLE_LEN {
        return false;
    }
    let x = sha1(&[scramble, &h2]);
    let mut h1 = [0u8; 20];
    for i in 0..20 {
        h1[i] = token[i] ^ x[i];
    }
    sha1(&[&h1]) == h2
}

/// ER_ACCESS_DENIED_ERROR as MariaDB words it (SQLSTATE 28000).
pub fn access_denied_error(user: &str, host: &str, using_password: bool) -> SqlError {
    SqlError::new(
        code::ER_ACCESS_DENIED_ERROR,
        "28000",
        format!(
            "Access denied for user '{user}'@'{host}' (using password: {})",
            if using_password { "YES" } else { "NO" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{put_lenenc_bytes, put_lenenc_int};

    #[test]
    fn password_hash_matches_mariadb() {
        // SELECT PASSWORD('password') in MariaDB.
        assert_eq!(
            password_hash("password"),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        assert_eq!(
            password_hash("123456"),
            "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
        );
        assert_eq!(password_hash(""), "");
    }

    #[test]
    fn native_password_round_trip() {
        let scramble = *b"abcdefghij0123456789";
        let stored = password_hash("secret");
        let tok = native_password_token(b"secret", &scramble);
        assert_eq!(tok.len(), 20);
        assert!(verify_native_password(&scramble, &tok, &stored));
        let bad = native_password_token(b"secreT", &scramble);
        assert!(!verify_native_password(&scramble, &bad, &stored));
        assert!(!verify_native_password(&scramble, &[], &stored));
        assert!(!verify_native_password(&scramble, &tok[..19], &stored));
        assert!(verify_native_password(&scramble, &[], ""));
        assert!(!verify_native_password(&scramble, &tok, ""));
        assert!(!verify_native_password(&scramble, &tok, "*nothex"));
    }

    #[test]
    fn initial_handshake_layout() {
        let hs = InitialHandshake {
            server_version: "5.5.5-10.11.99-MariaDB-onelog",
            connection_id: 7,
            scramble: *b"ABCDEFGHIJKLMNOPQRST",
            capabilities: server_capabilities(false),
            collation: 45,
            status: 2,
            auth_plugin: NATIVE_PASSWORD_PLUGIN,
        };
        let mut b = Vec::new();
        hs.encode(&mut b);
        let mut r = Reader::new(&b);
        assert_eq!(r.u8().unwrap(), 10);
        assert_eq!(
            r.null_terminated().unwrap(),
            b"5.5.5-10.11.99-MariaDB-onelog"
        );
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.take(8).unwrap(), b"ABCDEFGH");
        assert_eq!(r.u8().unwrap(), 0);
        let lo = r.u16().unwrap() as u64;
        assert_eq!(r.u8().unwrap(), 45);
        assert_eq!(r.u16().unwrap(), 2);
        let hi = r.u16().unwrap() as u64;
        assert_eq!(lo | hi << 16, server_capabilities(false) & 0xFFFF_FFFF);
        assert_eq!(r.u8().unwrap(), 21);
        assert_eq!(r.take(6).unwrap(), &[0; 6]);
        // MariaDB's extended capabilities (the server is not CLIENT_MYSQL): bulk operations.
        let ext = r.u32().unwrap() as u64;
        assert_eq!(ext << 32, server_capabilities(false) & !0xFFFF_FFFF);
        assert_eq!(ext << 32, MARIADB_CLIENT_STMT_BULK_OPERATIONS);
        assert_eq!(r.take(13).unwrap(), b"IJKLMNOPQRST\0");
        assert_eq!(r.null_terminated().unwrap(), b"mysql_native_password");
        assert!(r.is_empty());
        assert_eq!(server_capabilities(false) & CLIENT_DEPRECATE_EOF, 0);
        assert_ne!(server_capabilities(true) & CLIENT_SSL, 0);
    }

    #[test]
    fn scramble_is_printable() {
        let s = new_scramble();
        assert!(s.iter().all(|&b| (0x21..=0x7e).contains(&b)));
    }

    fn response_prefix(caps: u32, ext: u32) -> Vec<u8> {
        let mut b = Vec::new();
        put_u32(&mut b, caps);
        put_u32(&mut b, 16 << 20);
        b.push(45);
        b.extend_from_slice(&[0; 19]);
        put_u32(&mut b, ext);
        b
    }

    #[test]
    fn parse_ssl_request() {
        let caps = (CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION) as u32;
        let b = response_prefix(caps, 4);
        assert_eq!(b.len(), 32);
        match parse_handshake_response(&b).unwrap() {
            ClientHello::SslRequest {
                capabilities,
                collation,
                ..
            } => {
                assert_eq!(capabilities, caps as u64 | 4 << 32);
                assert_eq!(collation, 45);
            }
            other => panic!("{other:?}"),
        }
        // 32 bytes without CLIENT_SSL is an error.
        let b = response_prefix(CLIENT_PROTOCOL_41 as u32, 0);
        assert!(parse_handshake_response(&b).is_err());
    }

    #[test]
    fn parse_full_response() {
        let caps = (CLIENT_PROTOCOL_41
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_CONNECT_ATTRS) as u32;
        let mut b = response_prefix(caps, 0);
        put_null_str(&mut b, b"root");
        put_lenenc_bytes(&mut b, &[9u8; 20]);
        put_null_str(&mut b, b"test");
        put_null_str(&mut b, b"client_ed25519");
        let mut attrs = Vec::new();
        put_lenenc_bytes(&mut attrs, b"_client_name");
        put_lenenc_bytes(&mut attrs, b"libmariadb");
        put_lenenc_int(&mut b, attrs.len() as u64);
        b.extend_from_slice(&attrs);
        let ClientHello::Response(r) = parse_handshake_response(&b).unwrap() else {
            panic!()
        };
        assert_eq!(r.user, "root");
        assert_eq!(r.auth_response, vec![9u8; 20]);
        assert_eq!(r.database.as_deref(), Some("test"));
        assert_eq!(r.auth_plugin.as_deref(), Some("client_ed25519"));
        assert!(r.needs_auth_switch());
        assert_eq!(
            r.attributes,
            vec![("_client_name".to_string(), "libmariadb".to_string())]
        );
        // Truncated attributes are an error, not a panic.
        assert!(parse_handshake_response(&b[..b.len() - 3]).is_err());

        // SECURE_CONNECTION with a one-byte length, no database, no plugin.
        let caps = (CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION) as u32;
        let mut b = response_prefix(caps, 0);
        put_null_str(&mut b, b"u");
        b.push(0);
        let ClientHello::Response(r) = parse_handshake_response(&b).unwrap() else {
            panic!()
        };
        assert_eq!(r.user, "u");
        assert!(r.auth_response.is_empty());
        assert_eq!(r.database, None);
        assert!(!r.needs_auth_switch());
    }

    #[test]
    fn auth_switch_layout() {
        let b = native_auth_switch_request(b"ABCDEFGHIJKLMNOPQRST");
        assert_eq!(b, b"\xfemysql_native_password\0ABCDEFGHIJKLMNOPQRST\0");
    }

    #[test]
    fn access_denied_message() {
        let e = access_denied_error("root", "localhost", true);
        assert_eq!(e.code, 1045);
        assert_eq!(e.state, "28000");
        assert_eq!(
            e.message,
            "Access denied for user 'root'@'localhost' (using password: YES)"
        );
    }
}
