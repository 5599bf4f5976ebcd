//! A tiny test-only server built from onelog-protocol, driven by real MariaDB clients:
//! the `mariadb` command-line client and Python's MySQLdb (mysqlclient / libmariadb).
//! Tests are skipped (with a note) when the client is not installed.

use onelog_protocol::*;
use onelog_types::{code, SqlError, Value};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command as Proc, Output, Stdio};
use std::thread;

const PASSWORD: &str = "secret";
const MAX_PACKET: usize = 32 << 20;

fn start_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for (id, conn) in listener.incoming().enumerate() {
            let Ok(conn) = conn else { continue };
            thread::spawn(move || {
                let _ = serve(conn, id as u32 + 1);
            });
        }
    });
    port
}

fn serve(tcp: TcpStream, conn_id: u32) -> Result<()> {
    tcp.set_nodelay(true)?;
    let mut ps = PacketStream::new(tcp);
    ps.set_max_allowed_packet(MAX_PACKET);
    let scramble = new_scramble();
    let status = status::SERVER_STATUS_AUTOCOMMIT;
    let hs = InitialHandshake {
        server_version: DEFAULT_SERVER_VERSION,
        connection_id: conn_id,
        scramble,
        capabilities: server_capabilities(false),
        collation: 45,
        status,
        auth_plugin: NATIVE_PASSWORD_PLUGIN,
    };
    ps.write_packet_with(|b| hs.encode(b))?;
    ps.flush()?;
    let resp = match parse_handshake_response(&ps.read_packet()?)? {
        ClientHello::Response(r) => r,
        ClientHello::SslRequest { .. } => {
            return Err(ProtocolError::Malformed("no TLS in the test server"))
        }
    };
    let mut token = resp.auth_response.clone();
    if resp.needs_auth_switch() {
        ps.write_packet(&native_auth_switch_request(&scramble))?;
        ps.flush()?;
        token = ps.read_packet()?;
    }
    let stored = password_hash(PASSWORD);
    if resp.user != "root" || !verify_native_password(&scramble, &token, &stored) {
        ps.write_err(&access_denied_error(
            &resp.user,
            "localhost",
            !token.is_empty(),
        ))?;
        ps.flush()?;
        return Ok(());
    }
    ps.write_ok(&OkPacket::with_status(status))?;
    ps.flush()?;
    // As MariaDB: once authenticated, oversized packets are skipped and answered.
    ps.set_skip_oversized(true);

    let mut buf = Vec::new();
    loop {
        ps.reset_seq();
        match ps.read_packet_into(&mut buf) {
            Ok(()) => {}
            Err(e @ ProtocolError::PacketTooLarge { .. }) => {
                // ER_NET_PACKET_TOO_LARGE; the connection goes on when the packet was skipped.
                ps.write_err(&e.to_sql_error())?;
                ps.flush()?;
                if e.is_recoverable() {
                    continue;
                }
                return Ok(());
            }
            Err(ProtocolError::Closed) => return Ok(()),
            Err(e) => return Err(e),
        }
        let cmd = match parse_command(&buf, resp.capabilities) {
            Ok(c) => c,
            Err(e) => {
                ps.write_err(&e.to_sql_error())?;
                ps.flush()?;
                continue;
            }
        };
        match cmd {
            Command::Quit => return Ok(()),
            Command::Ping | Command::InitDb(_) => ps.write_ok(&OkPacket::with_status(status))?,
            Command::Query(q) => {
                let q = String::from_utf8_lossy(q);
                let lower = q.trim().to_ascii_lowercase();
                if lower == "select @@version_comment limit 1" {
                    let cols = [ColumnInfo::expr(
                        "@@version_comment",
                        FieldType::expr_string(64),
                        true,
                    )];
                    ps.write_result_header(&cols, status)?;
                    ps.write_text_row(&[Value::str("onelog test server")], &wire_types(&cols))?;
                    ps.write_eof(0, status)?;
                } else if lower == "select database(), user() limit 1" {
                    let cols = [
                        ColumnInfo::expr("DATABASE()", FieldType::expr_string(64), true),
                        ColumnInfo::expr("USER()", FieldType::expr_string(141), true),
                    ];
                    ps.write_result_header(&cols, status)?;
                    let row = [Value::Null, Value::str("root@localhost")];
                    ps.write_text_row(&row, &wire_types(&cols))?;
                    ps.write_eof(0, status)?;
                } else if lower.starts_with("select 1") {
                    let cols = [ColumnInfo::expr("1", FieldType::expr_int(1, false), false)];
                    ps.write_result_header(&cols, status)?;
                    ps.write_text_row(&[Value::Int(1)], &wire_types(&cols))?;
                    ps.write_eof(0, status)?;
                } else if lower.starts_with("select length") {
                    // Reports the length of the query it received (split-packet check).
                    let cols = [ColumnInfo::expr("len", FieldType::expr_bigint(), false)];
                    ps.write_result_header(&cols, status)?;
                    ps.write_text_row(&[Value::Int(q.len() as i64)], &wire_types(&cols))?;
                    ps.write_eof(0, status)?;
                } else if lower.starts_with("set ") {
                    ps.write_ok(&OkPacket::with_status(status))?;
                } else {
                    ps.write_err(&SqlError::from_code(
                        code::ER_PARSE_ERROR,
                        "You have an error in your SQL syntax",
                    ))?;
                }
            }
            _ => ps.write_err(&SqlError::from_code(
                code::ER_UNKNOWN_COM_ERROR,
                "Unknown command",
            ))?,
        }
        ps.flush()?;
    }
}

fn mariadb_cli() -> Option<&'static str> {
    let p = "/usr/bin/mariadb";
    if Path::new(p).exists() {
        Some(p)
    } else {
        eprintln!("skipped: {p} not installed");
        None
    }
}

fn run_cli(port: u16, password: &str, args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut cmd = Proc::new(mariadb_cli().unwrap());
    cmd.arg("--no-defaults")
        .arg("-h127.0.0.1")
        .arg(format!("-P{port}"))
        .arg("-uroot")
        .arg(format!("-p{password}"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        if let Some(data) = stdin {
            let _ = pipe.write_all(&data);
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Output with long runs of the padding character squeezed, for assertion messages.
fn short(b: &[u8]) -> String {
    let s = text(b);
    let mut out = String::new();
    for part in s.split("xxxxxxxx") {
        if !part.is_empty() {
            out.push_str(part);
            out.push('~');
        }
    }
    out
}

#[test]
fn mariadb_cli_select_1() {
    if mariadb_cli().is_none() {
        return;
    }
    let port = start_server();
    let out = run_cli(port, PASSWORD, &["-e", "SELECT 1"], None);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1\n1\n");

    // Interactive-style session: the client asks @@version_comment first.
    let out = run_cli(
        port,
        PASSWORD,
        &["-t"],
        Some(b"select @@version_comment limit 1;\nSELECT 1;\n".to_vec()),
    );
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("| onelog test server |"), "{s}");
    assert!(s.contains("| 1 |"), "{s}");
}

#[test]
fn mariadb_cli_status_sees_mariadb_version() {
    if mariadb_cli().is_none() {
        return;
    }
    let port = start_server();
    let out = run_cli(port, PASSWORD, &["-e", "status"], None);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("10.11.99-MariaDB-onelog"), "{s}");
}

#[test]
fn mariadb_cli_wrong_password() {
    if mariadb_cli().is_none() {
        return;
    }
    let port = start_server();
    let out = run_cli(port, "wrong", &["-e", "SELECT 1"], None);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)"
        ),
        "{err}"
    );
}

#[test]
fn mariadb_cli_large_queries() {
    if mariadb_cli().is_none() {
        return;
    }
    let port = start_server();
    // 20 MiB query: sent as two packets, joined by the server.
    let mut q = b"select length, '".to_vec();
    q.resize(20 << 20, b'x');
    q.extend_from_slice(b"';\n");
    let qlen = q.len() - 2;
    let out = run_cli(port, PASSWORD, &["--max-allowed-packet=64M"], Some(q));
    assert!(out.status.success(), "stderr: {}", short(&out.stderr));
    assert_eq!(text(&out.stdout), format!("len\n{qlen}\n"));

    // 40 MiB query: above the server's max_allowed_packet (32 MiB): error 1153, and the
    // connection goes on (--force continues after errors).
    let mut q = b"select length, '".to_vec();
    q.resize(40 << 20, b'x');
    q.extend_from_slice(b"';\nSELECT 1;\n");
    let out = run_cli(
        port,
        PASSWORD,
        &["--max-allowed-packet=64M", "--force"],
        Some(q),
    );
    let err = short(&out.stderr);
    assert!(
        err.contains("ERROR 1153 (08S01)")
            && err.contains("Got a packet bigger than 'max_allowed_packet' bytes"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "1\n1\n");
}

#[test]
fn python_mysqldb() {
    let py = "/usr/bin/python3";
    let ok = Proc::new(py)
        .args(["-c", "import MySQLdb"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipped: MySQLdb not available for {py}");
        return;
    }
    let port = start_server();
    let script = format!(
        "import MySQLdb\n\
         c = MySQLdb.connect(host='127.0.0.1', port={port}, user='root', passwd='{PASSWORD}', db='test')\n\
         cur = c.cursor()\n\
         cur.execute('SELECT 1')\n\
         print(cur.fetchall(), c.get_server_info())\n\
         try:\n    MySQLdb.connect(host='127.0.0.1', port={port}, user='root', passwd='no')\n\
         except MySQLdb.OperationalError as e:\n    print(e.args)\n"
    );
    let out = Proc::new(py).args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.starts_with("((1,),) "), "{s}");
    assert!(s.contains("10.11.99-MariaDB-onelog"), "{s}");
    assert!(
        s.contains("(1045, \"Access denied for user 'root'@'localhost' (using password: YES)\")"),
        "{s}"
    );
}
