//! information_schema.PLUGINS and SHOW PLUGINS: what onelog has of MariaDB's plugins, in
//! MariaDB 10.11's columns. The binlog (MariaDB's pseudo storage engine of that name; in
//! onelog the only log), the one authentication method (`mysql_native_password`) and the
//! storage engine, presented as InnoDB (as SHOW ENGINES does). Nothing else is a plugin
//! onelog has.

use onelog_types::Value;

use crate::binder::VirtualColumn;
use crate::session::Session;
use crate::show::s;

/// (name, version, type, type version, author, description, load option, auth version)
type Plugin = (
    &'static str,
    &'static str,
    &'static str,
    String,
    &'static str,
    String,
    &'static str,
    &'static str,
);

/// The plugins of a server of version `version` (`@@version`).
fn plugins(version: &str) -> Vec<Plugin> {
    // MariaDB's storage engine interface version is its server version as a number.
    let engine_api = {
        let mut v = version
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let mut n = || v.next().unwrap_or(0);
        format!("{}.0", n() * 10000 + n() * 100 + n())
    };
    vec![
        (
            "binlog",
            "1.0",
            "STORAGE ENGINE",
            engine_api.clone(),
            "MySQL AB",
            "This is a pseudo storage engine to represent the binlog in a transaction".into(),
            "FORCE",
            "1.0",
        ),
        (
            "mysql_native_password",
            "1.0",
            "AUTHENTICATION",
            "2.2".into(),
            "R.J.Silk, Sergei Golubchik",
            "Native MySQL authentication".into(),
            "FORCE",
            "1.0",
        ),
        (
            "InnoDB",
            "10.11",
            "STORAGE ENGINE",
            engine_api,
            "onelog",
            crate::show::engine_rows()[0][2].to_string(),
            "ON",
            "10.11",
        ),
    ]
}

/// information_schema.PLUGINS.
pub(super) fn info_rows(sess: &Session) -> (Vec<VirtualColumn>, Vec<Vec<Value>>) {
    let cols = [
        "PLUGIN_NAME",
        "PLUGIN_VERSION",
        "PLUGIN_STATUS",
        "PLUGIN_TYPE",
        "PLUGIN_TYPE_VERSION",
        "PLUGIN_LIBRARY",
        "PLUGIN_LIBRARY_VERSION",
        "PLUGIN_AUTHOR",
        "PLUGIN_DESCRIPTION",
        "PLUGIN_LICENSE",
        "LOAD_OPTION",
        "PLUGIN_MATURITY",
        "PLUGIN_AUTH_VERSION",
    ];
    let rows = plugins(&sess.db.engine.options().server_version)
        .into_iter()
        .map(|(name, ver, ty, ty_ver, author, desc, load, auth)| {
            vec![
                s(name),
                s(ver),
                s("ACTIVE"),
                s(ty),
                s(&ty_ver),
                Value::Null,
                Value::Null,
                s(author),
                s(&desc),
                s("GPL"),
                s(load),
                s("Stable"),
                s(auth),
            ]
        })
        .collect();
    (cols.iter().map(|c| VirtualColumn::text(c)).collect(), rows)
}

/// SHOW PLUGINS: Name, Status, Type, Library, License.
pub(crate) fn show_rows(sess: &Session) -> Vec<Vec<Value>> {
    plugins(&sess.db.engine.options().server_version)
        .into_iter()
        .map(|(name, _, ty, ..)| vec![s(name), s("ACTIVE"), s(ty), Value::Null, s("GPL")])
        .collect()
}
