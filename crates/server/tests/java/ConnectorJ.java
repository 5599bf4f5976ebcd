import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.*;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * MariaDB Connector/J against a MariaDB-compatible server. Usage: ConnectorJ PORT USER
 * PASSWORD. Runs every check once per set of URL options (client-side and server-side
 * prepared statements, bulk batches on and off); throws on any mismatch and prints
 * "OK connector/j" at the end.
 */
public class ConnectorJ {
    static String base;

    public static void main(String[] args) throws Exception {
        base = "jdbc:mariadb://127.0.0.1:" + args[0] + "/";
        String auth = "user=" + args[1] + "&password=" + args[2];
        String[] variants = {
            "",
            "useServerPrepStmts=true",
            "useServerPrepStmts=true&useBulkStmts=true&rewriteBatchedStatements=true",
            "useBulkStmts=false&useBulkStmtsForInserts=false",
        };
        try (Connection c = DriverManager.getConnection(base + "?" + auth)) {
            Statement st = c.createStatement();
            for (int i = 0; i < variants.length; i++) {
                st.execute("DROP DATABASE IF EXISTS jdbc" + i);
                st.execute("CREATE DATABASE jdbc" + i + " CHARACTER SET utf8mb4");
            }
        }
        for (int i = 0; i < variants.length; i++) {
            String url = base + "jdbc" + i + "?" + auth + (variants[i].isEmpty() ? "" : "&" + variants[i]);
            System.out.println("-- " + url);
            try (Connection c = DriverManager.getConnection(url)) {
                run(c, "jdbc" + i, url);
            }
        }
        System.out.println("OK connector/j");
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static void eq(Object want, Object got, String what) {
        if (want == null ? got != null : !want.equals(got))
            throw new AssertionError(what + ": want <" + want + "> got <" + got + ">");
    }

    static long scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            check(rs.next(), "no row for " + sql);
            return rs.getLong(1);
        }
    }

    static void run(Connection c, String db, String url) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        eq("MariaDB", md.getDatabaseProductName(), "product name");
        check(c.getAutoCommit(), "autocommit on by default");
        eq(1L, scalar(c, "SELECT @@autocommit"), "@@autocommit");
        eq(db, c.getCatalog(), "catalog");
        batches(c);
        transactions(c, url);
        types(c);
        metadata(c, db);
        procedures(c);
    }

    static void batches(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, "
                + "s VARCHAR(50)) DEFAULT CHARSET=utf8mb4");
        }
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO t (k, s) VALUES (?, ?)", Statement.RETURN_GENERATED_KEYS)) {
            for (int i = 1; i <= 1000; i++) {
                ps.setInt(1, i);
                ps.setString(2, "row " + i);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            eq(1000, counts.length, "batch count");
            for (int n : counts) check(n == 1 || n == Statement.SUCCESS_NO_INFO, "batch row count " + n);
            List<Long> keys = new ArrayList<>();
            try (ResultSet rs = ps.getGeneratedKeys()) {
                while (rs.next()) keys.add(rs.getLong(1));
            }
            eq(1000, keys.size(), "generated keys");
            for (int i = 0; i < 1000; i++) eq((long) i + 1, keys.get(i), "key " + i);
        }
        eq(1000L, scalar(c, "SELECT COUNT(*) FROM t"), "rows after batch");
        eq(500500L, scalar(c, "SELECT SUM(k) FROM t"), "sum after batch");
        try (PreparedStatement ps = c.prepareStatement("UPDATE t SET s = ? WHERE k % 100 = ?")) {
            for (int i = 0; i < 5; i++) {
                ps.setString(1, "upd");
                ps.setInt(2, i);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            eq(5, counts.length, "update batch");
            for (int n : counts) check(n == 10 || n == Statement.SUCCESS_NO_INFO, "update count " + n);
        }
        eq(50L, scalar(c, "SELECT COUNT(*) FROM t WHERE s = 'upd'"), "updated rows");
        try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t (k, s) VALUES (2000, 'a')");
            st.addBatch("UPDATE t SET k = k + 1 WHERE k >= 2000");
            st.addBatch("DELETE FROM t WHERE k = 2001");
            eq("[1, 1, 1]", Arrays.toString(st.executeBatch()), "statement batch");
            eq(1, st.executeUpdate("INSERT INTO t (k) VALUES (7)", Statement.RETURN_GENERATED_KEYS),
                "insert count");
            try (ResultSet rs = st.getGeneratedKeys()) {
                check(rs.next(), "generated key");
                eq(1002L, rs.getLong(1), "single generated key");
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT id, k, s FROM t WHERE k BETWEEN ? AND ? ORDER BY k")) {
            ps.setInt(1, 99);
            ps.setInt(2, 101);
            try (ResultSet rs = ps.executeQuery()) {
                StringBuilder sb = new StringBuilder();
                while (rs.next()) sb.append(rs.getInt(1)).append(':').append(rs.getString(3)).append(' ');
                eq("99:row 99 100:upd 101:upd ", sb.toString(), "prepared select");
            }
        }
    }

    static void transactions(Connection c, String url) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement(); Connection other = DriverManager.getConnection(url)) {
            st.executeUpdate("INSERT INTO t (k) VALUES (-1)");
            eq(1L, scalar(c, "SELECT COUNT(*) FROM t WHERE k = -1"), "own uncommitted row");
            eq(0L, scalar(other, "SELECT COUNT(*) FROM t WHERE k = -1"), "other sees no uncommitted row");
            c.rollback();
            eq(0L, scalar(c, "SELECT COUNT(*) FROM t WHERE k = -1"), "rolled back");
            st.executeUpdate("INSERT INTO t (k) VALUES (-2)");
            Savepoint sp = c.setSavepoint("sp1");
            st.executeUpdate("INSERT INTO t (k) VALUES (-3)");
            c.rollback(sp);
            c.commit();
            eq(1L, scalar(other, "SELECT COUNT(*) FROM t WHERE k IN (-2, -3)"), "committed");
            try {
                st.executeUpdate("INSERT INTO t (id, k) VALUES (1, 0)");
                throw new AssertionError("duplicate key accepted");
            } catch (SQLIntegrityConstraintViolationException e) {
                eq(1062, e.getErrorCode(), "duplicate error code");
                eq("23000", e.getSQLState(), "duplicate sqlstate");
            }
            c.rollback();
        } finally {
            c.setAutoCommit(true);
        }
        eq(1L, scalar(c, "SELECT @@autocommit"), "@@autocommit restored");
    }

    static final String EMOJI = "caf\u00e9 \uD83D\uDE00 \u4e2d";

    static void types(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE ty (id INT PRIMARY KEY, i INT, b BIGINT, d DECIMAL(20,6), "
                + "f DOUBLE, v VARCHAR(50), dt DATE, ts6 DATETIME(6), tm TIMESTAMP NULL, bl BLOB, "
                + "bo BOOLEAN) DEFAULT CHARSET=utf8mb4");
        }
        byte[] blob = new byte[300];
        for (int i = 0; i < blob.length; i++) blob[i] = (byte) i;
        LocalDateTime dt6 = LocalDateTime.of(2024, 2, 29, 23, 59, 58, 123456000);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO ty VALUES (?,?,?,?,?,?,?,?,?,?,?)")) {
            ps.setInt(1, 1);
            ps.setInt(2, Integer.MIN_VALUE);
            ps.setLong(3, Long.MAX_VALUE);
            ps.setBigDecimal(4, new BigDecimal("-12345678901234.123456"));
            ps.setDouble(5, 2.5e-3);
            ps.setString(6, EMOJI);
            ps.setDate(7, Date.valueOf("1999-12-31"));
            ps.setObject(8, dt6);
            ps.setTimestamp(9, Timestamp.valueOf("2020-01-02 03:04:05"));
            ps.setBytes(10, blob);
            ps.setBoolean(11, true);
            ps.executeUpdate();
            ps.setInt(1, 2);
            for (int i = 2; i <= 11; i++) ps.setNull(i, Types.NULL);
            ps.executeUpdate();
        }
        String q = "SELECT id, i, b, d, f, v, dt, ts6, tm, bl, bo FROM ty ORDER BY id";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(q)) {
            readTypes(rs, blob, dt6);
        }
        try (PreparedStatement ps = c.prepareStatement(q + " LIMIT ?")) {
            ps.setInt(1, 10);
            try (ResultSet rs = ps.executeQuery()) {
                readTypes(rs, blob, dt6);
            }
        }
    }

    static void readTypes(ResultSet rs, byte[] blob, LocalDateTime dt6) throws SQLException {
        ResultSetMetaData m = rs.getMetaData();
        eq("INTEGER BIGINT DECIMAL DOUBLE VARCHAR DATE DATETIME TIMESTAMP BLOB BOOLEAN",
            String.join(" ", m.getColumnTypeName(2), m.getColumnTypeName(3), m.getColumnTypeName(4),
                m.getColumnTypeName(5), m.getColumnTypeName(6), m.getColumnTypeName(7),
                m.getColumnTypeName(8), m.getColumnTypeName(9), m.getColumnTypeName(10),
                m.getColumnTypeName(11)), "column type names");
        eq(Types.BOOLEAN, m.getColumnType(11), "BOOLEAN jdbc type");
        eq(6, m.getScale(4), "decimal scale");
        check(rs.next(), "row 1");
        eq(Integer.MIN_VALUE, rs.getInt("i"), "INT");
        eq(Long.MAX_VALUE, rs.getLong("b"), "BIGINT");
        eq(new BigDecimal("-12345678901234.123456"), rs.getBigDecimal("d"), "DECIMAL");
        eq(2.5e-3, rs.getDouble("f"), "DOUBLE");
        eq(EMOJI, rs.getString("v"), "VARCHAR utf8mb4");
        eq(LocalDate.of(1999, 12, 31), rs.getObject("dt", LocalDate.class), "DATE");
        eq(dt6, rs.getObject("ts6", LocalDateTime.class), "DATETIME(6)");
        eq(Timestamp.valueOf("2020-01-02 03:04:05"), rs.getTimestamp("tm"), "TIMESTAMP");
        check(Arrays.equals(blob, rs.getBytes("bl")), "BLOB");
        eq(true, rs.getBoolean("bo"), "BOOLEAN");
        eq(Boolean.class, rs.getObject("bo").getClass(), "BOOLEAN class");
        check(rs.next(), "row 2");
        for (int i = 2; i <= 11; i++) {
            check(rs.getObject(i) == null, "NULL in column " + i);
        }
        eq(0, rs.getInt("i"), "NULL as int");
        check(rs.wasNull(), "wasNull");
        check(!rs.next(), "two rows");
    }

    static void metadata(Connection c, String db) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        List<String> tables = new ArrayList<>();
        try (ResultSet rs = md.getTables(db, null, "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                eq(db, rs.getString("TABLE_CAT"), "TABLE_CAT");
                tables.add(rs.getString("TABLE_NAME") + "/" + rs.getString("TABLE_TYPE"));
            }
        }
        eq("[t/TABLE, ty/TABLE]", tables.toString(), "getTables");
        StringBuilder cols = new StringBuilder();
        try (ResultSet rs = md.getColumns(db, null, "t", "%")) {
            while (rs.next()) {
                cols.append(rs.getString("COLUMN_NAME")).append(' ').append(rs.getString("TYPE_NAME"))
                    .append(' ').append(rs.getInt("DATA_TYPE")).append(' ').append(rs.getInt("COLUMN_SIZE"))
                    .append(' ').append(rs.getString("IS_NULLABLE")).append(' ')
                    .append(rs.getString("IS_AUTOINCREMENT")).append(' ')
                    .append(rs.getInt("ORDINAL_POSITION")).append(';');
            }
        }
        eq("id INT 4 10 NO YES 1;k INT 4 10 NO NO 2;s VARCHAR 12 50 YES NO 3;", cols.toString(), "getColumns");
        try (ResultSet rs = md.getPrimaryKeys(db, null, "t")) {
            check(rs.next(), "primary key");
            eq("id", rs.getString("COLUMN_NAME"), "primary key column");
        }
    }

    static void procedures(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE PROCEDURE p (IN a INT, OUT b INT, INOUT s VARCHAR(20)) "
                + "BEGIN SET b = a * 2; SET s = CONCAT(s, '!'); END");
            st.execute("CREATE PROCEDURE q (IN lim INT, OUT n BIGINT) "
                + "BEGIN SELECT k FROM t ORDER BY k LIMIT lim; SELECT COUNT(*) INTO n FROM t; END");
        }
        try (CallableStatement cs = c.prepareCall("{call p(?, ?, ?)}")) {
            cs.setInt(1, 21);
            cs.registerOutParameter(2, Types.INTEGER);
            cs.setString(3, "hi");
            cs.registerOutParameter(3, Types.VARCHAR);
            cs.execute();
            eq(42, cs.getInt(2), "OUT param");
            eq("hi!", cs.getString(3), "INOUT param");
            cs.setInt(1, 5);
            cs.setString(3, "x");
            cs.execute();
            eq(10, cs.getInt(2), "OUT param again");
            eq("x!", cs.getString(3), "INOUT param again");
        }
        long rows = scalar(c, "SELECT COUNT(*) FROM t");
        try (CallableStatement cs = c.prepareCall("{call q(?, ?)}")) {
            cs.setInt(1, 3);
            cs.registerOutParameter(2, Types.BIGINT);
            check(cs.execute(), "result set first");
            StringBuilder ks = new StringBuilder();
            try (ResultSet rs = cs.getResultSet()) {
                while (rs.next()) ks.append(rs.getInt(1)).append(' ');
            }
            eq("-2 1 2 ", ks.toString(), "procedure result set");
            eq(rows, cs.getLong(2), "OUT count");
        }
    }
}
