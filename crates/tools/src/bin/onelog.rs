//! `onelog`: tools for onelog. Subcommands dispatch on the first argument.

const USAGE: &str = "\
Usage: onelog <command> [args]
  backup ...    a consistent backup of a running onelogd (onelog backup --help)
  restore ...   point-in-time restore from a backup (onelog restore --help)
  bench ...     benchmarks against MariaDB (onelog bench help)
  binlog ...    binlog dump / export";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("backup") => onelog_tools::backup_cmd::main(&args[1..]),
        Some("restore") => onelog_tools::restore::main(&args[1..]),
        Some("bench") => onelog_tools::bench::main(&args[1..]),
        Some("binlog") => onelog_tools::binlog_cmd::main(&args[1..]),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            0
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    };
    std::process::exit(code);
}
