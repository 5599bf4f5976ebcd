"""DB-API round trips against onelogd. Usage: roundtrip.py DRIVER (socket PATH | tcp PORT)."""
import datetime
import decimal
import os
import sys

driver, how, where = sys.argv[1], sys.argv[2], sys.argv[3]
if driver == "MySQLdb":
    import MySQLdb as db

    def connect(**kw):
        if how == "socket":
            return db.connect(unix_socket=where, user="root", charset="utf8mb4", **kw)
        return db.connect(host="127.0.0.1", port=int(where), user="root", charset="utf8mb4", **kw)
else:
    import pymysql as db

    def connect(**kw):
        if how == "socket":
            return db.connect(unix_socket=where, user="root", charset="utf8mb4", **kw)
        return db.connect(host="127.0.0.1", port=int(where), user="root", charset="utf8mb4", **kw)

dbname = "py_%s_%s" % (driver.lower(), how)
c = connect()
c.autocommit(True)
cur = c.cursor()
cur.execute("DROP DATABASE IF EXISTS " + dbname)
cur.execute("CREATE DATABASE " + dbname)
cur.execute("USE " + dbname)

# --- integers at their edges ---------------------------------------------------------
ints = [
    ("TINYINT", -128, 127), ("TINYINT UNSIGNED", 0, 255),
    ("SMALLINT", -32768, 32767), ("SMALLINT UNSIGNED", 0, 65535),
    ("MEDIUMINT", -8388608, 8388607), ("MEDIUMINT UNSIGNED", 0, 16777215),
    ("INT", -2147483648, 2147483647), ("INT UNSIGNED", 0, 4294967295),
    ("BIGINT", -9223372036854775808, 9223372036854775807),
    ("BIGINT UNSIGNED", 0, 18446744073709551615),
]
cols = ", ".join("c%d %s" % (i, t) for i, (t, _, _) in enumerate(ints))
cur.execute("CREATE TABLE ints (id INT PRIMARY KEY, %s)" % cols)
ph = ", ".join(["%s"] * (len(ints) + 1))
rows = [
    tuple([1] + [lo for _, lo, _ in ints]),
    tuple([2] + [hi for _, _, hi in ints]),
    tuple([3] + [None] * len(ints)),
    tuple([4] + [0] * len(ints)),
]
cur.executemany("INSERT INTO ints VALUES (%s)" % ph, rows)
assert cur.rowcount == 4, cur.rowcount
cur.execute("SELECT * FROM ints ORDER BY id")
got = cur.fetchall()
assert [tuple(r) for r in got] == rows, (got, rows)
# out of range is an error in strict mode
try:
    cur.execute("INSERT INTO ints (id, c0) VALUES (%s, %s)", (5, 128))
    raise SystemExit("expected 1264 for TINYINT 128")
except db.MySQLError as e:
    assert e.args[0] == 1264, e.args

# --- approximate and exact numerics -------------------------------------------------------
cur.execute("CREATE TABLE nums (id INT PRIMARY KEY, f FLOAT, d DOUBLE, dec1 DECIMAL(30,10), dec2 DECIMAL(5,2) UNSIGNED)")
vals = [
    (1, 1.5, 1.0000000000000002, decimal.Decimal("12345678901234567890.0123456789"), decimal.Decimal("999.99")),
    (2, -0.25, -1e308, decimal.Decimal("-0.0000000001"), decimal.Decimal("0.00")),
    (3, None, None, None, None),
    (4, 3.0e38, 2.2250738585072014e-308, decimal.Decimal("0E-10"), decimal.Decimal("0.01")),
]
cur.executemany("INSERT INTO nums VALUES (%s, %s, %s, %s, %s)", vals)
cur.execute("SELECT * FROM nums ORDER BY id")
got = [tuple(r) for r in cur.fetchall()]
for g, v in zip(got, vals):
    assert g[0] == v[0]
    if v[1] is None:
        assert g[1] is None and g[2] is None and g[3] is None and g[4] is None, g
        continue
    assert abs(g[1] - v[1]) <= abs(v[1]) * 1e-6, (g, v)
    assert g[2] == v[2], (g, v)
    assert g[3] == v[3] and isinstance(g[3], decimal.Decimal), (g, v)
    assert g[4] == v[4], (g, v)
cur.execute("SELECT dec1 * 2, dec2 + 0.01 FROM nums WHERE id = 1")
r = cur.fetchone()
assert r[0] == decimal.Decimal("24691357802469135780.0246913578"), r
assert r[1] == decimal.Decimal("1000.00"), r

# --- strings and binary ---------------------------------------------------------------------
cur.execute(
    "CREATE TABLE strs (id INT PRIMARY KEY, ch CHAR(10), vc VARCHAR(200), tx TEXT, "
    "bi BINARY(4), vb VARBINARY(16), bl BLOB, lb LONGBLOB, mt MEDIUMTEXT)"
)
uni = "héllo wörld — 日本語 😀 ünïcödé"
big = os.urandom(1 << 20)
allbytes = bytes(range(256))
srows = [
    (1, "abc", uni, uni * 100, b"\x00\x01\x02\x03", b"\x00'\"\\\n\r\x1a", allbytes, big, "x" * 100000),
    (2, "", "", "", b"ab\x00\x00", b"", b"", b"", ""),
    (3, None, None, None, None, None, None, None, None),
    (4, "trail   ", "it's a \"quote\" \\ back", "line1\nline2\ttab", b"\xff\xfe\xfd\xfc", b"\xff" * 16, big[:65535], big[::-1], uni),
]
for r in srows:
    cur.execute("INSERT INTO strs VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", r)
cur.execute("SELECT * FROM strs ORDER BY id")
got = [tuple(r) for r in cur.fetchall()]
assert len(got) == 4
for g, v in zip(got, srows):
    exp = list(v)
    if exp[1] is not None:
        exp[1] = exp[1].rstrip(" ")  # CHAR strips trailing spaces
    for i in range(len(exp)):
        gv = g[i]
        if isinstance(gv, (bytearray, memoryview)):
            gv = bytes(gv)
        if isinstance(exp[i], bytes) and isinstance(gv, str):
            gv = gv.encode("latin1")
        assert gv == exp[i], ("strs", v[0], i, repr(gv)[:200], repr(exp[i])[:200])
cur.execute("SELECT LENGTH(lb), LENGTH(tx), CHAR_LENGTH(vc) FROM strs WHERE id = 1")
assert tuple(cur.fetchone()) == (1 << 20, len(uni.encode()) * 100, len(uni))
cur.execute("SELECT id FROM strs WHERE vc = %s", (uni,))
assert [tuple(r) for r in cur.fetchall()] == [(1,)]
cur.execute("SELECT id FROM strs WHERE bl = %s", (allbytes,))
assert [tuple(r) for r in cur.fetchall()] == [(1,)]

# --- temporal ----------------------------------------------------------------------------------
cur.execute("CREATE TABLE times (id INT PRIMARY KEY, d DATE, dt DATETIME(6), ts TIMESTAMP NULL, t TIME, dt0 DATETIME)")
trows = [
    (1, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 23, 59, 59, 999999),
     datetime.datetime(2030, 1, 2, 3, 4, 5), datetime.timedelta(hours=12, minutes=34, seconds=56),
     datetime.datetime(1999, 12, 31, 23, 59, 59)),
    (2, datetime.date(1000, 1, 1), datetime.datetime(1000, 1, 1, 0, 0, 0, 1),
     datetime.datetime(1970, 1, 2, 0, 0, 0), datetime.timedelta(hours=-838, minutes=-59, seconds=-59),
     datetime.datetime(9999, 12, 31, 23, 59, 59)),
    (3, None, None, None, None, None),
    (4, datetime.date(9999, 12, 31), datetime.datetime(2000, 1, 1, 0, 0, 0),
     datetime.datetime(2038, 1, 19, 3, 14, 7), datetime.timedelta(hours=838, minutes=59, seconds=59),
     datetime.datetime(2000, 6, 15, 12, 0, 0)),
]
# Both drivers format negative timedeltas wrongly (e.g. '-35 1:0:1'), so the negative
# TIME goes in as text; it comes back as a timedelta.
ins = [list(r) for r in trows]
ins[1][4] = "-838:59:59"
cur.executemany("INSERT INTO times VALUES (%s, %s, %s, %s, %s, %s)", ins)
cur.execute("SELECT * FROM times ORDER BY id")
got = [tuple(r) for r in cur.fetchall()]
assert got == trows, (got, trows)
cur.execute("SELECT id FROM times WHERE dt > %s ORDER BY id", (datetime.datetime(2000, 1, 1),))
assert [r[0] for r in cur.fetchall()] == [1], "datetime comparison"

# --- NULL handling and expressions -----------------------------------------------------------
cur.execute("SELECT NULL, %s, %s IS NULL, COALESCE(%s, 'dflt')", (None, None, None))
assert tuple(cur.fetchone()) == (None, None, 1, "dflt")
cur.execute("SELECT COUNT(*), COUNT(c0) FROM ints")
assert tuple(cur.fetchone()) == (4, 3)

# --- transactions: autocommit off, commit, rollback ----------------------------------------
cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)")
c2 = connect(db=dbname)
c2.autocommit(False)
k2 = c2.cursor()
k2.execute("INSERT INTO acct VALUES (%s, %s)", (1, 100))
k2.execute("INSERT INTO acct VALUES (%s, %s)", (2, 200))
c2.rollback()
k2.execute("SELECT COUNT(*) FROM acct")
assert k2.fetchone()[0] == 0, "rollback"
k2.execute("INSERT INTO acct VALUES (%s, %s)", (1, 100))
k2.execute("INSERT INTO acct VALUES (%s, %s)", (2, 200))
cur.execute("SELECT COUNT(*) FROM acct")
assert cur.fetchone()[0] == 0, "uncommitted rows visible to another connection"
c2.commit()
cur.execute("SELECT SUM(bal) FROM acct")
assert cur.fetchone()[0] == 300, "commit"
k2.execute("UPDATE acct SET bal = bal - 50 WHERE id = 1")
assert k2.rowcount == 1
k2.execute("UPDATE acct SET bal = bal + 50 WHERE id = 2")
c2.commit()
k2.execute("DELETE FROM acct WHERE id = 1")
c2.rollback()
cur.execute("SELECT id, bal FROM acct ORDER BY id")
assert [tuple(r) for r in cur.fetchall()] == [(1, 50), (2, 250)]
# an error inside a transaction does not end it
k2.execute("INSERT INTO acct VALUES (3, 1)")
try:
    k2.execute("INSERT INTO acct VALUES (3, 2)")
    raise SystemExit("expected 1062")
except db.IntegrityError as e:
    assert e.args[0] == 1062, e.args
c2.commit()
cur.execute("SELECT bal FROM acct WHERE id = 3")
assert cur.fetchone()[0] == 1
# lastrowid
cur.execute("CREATE TABLE ai (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
cur.execute("INSERT INTO ai (v) VALUES (%s)", ("a",))
first = cur.lastrowid
cur.execute("INSERT INTO ai (v) VALUES (%s)", ("b",))
assert cur.lastrowid == first + 1, (first, cur.lastrowid)
c2.close()

# --- errors map to DB-API exceptions ------------------------------------------------------
for sql, code in [("SELECT * FROM nosuch", 1146), ("SELEC 1", 1064), ("SELECT nosuchcol FROM ai", 1054)]:
    try:
        cur.execute(sql)
        raise SystemExit("expected error for " + sql)
    except db.MySQLError as e:
        assert e.args[0] == code, (sql, e.args)
cur.execute("SELECT 1")
assert cur.fetchone()[0] == 1
cur.execute("DROP DATABASE " + dbname)
c.close()
print("OK", driver, how)
