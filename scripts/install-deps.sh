#!/usr/bin/env bash
# Installs what building and testing onelog needs, only when it is missing.
# Debian packages: clang/libclang-dev (RocksDB bindings), MariaDB 10.11 server and client
# tools (baseline and real clients), sysbench, Python connectors, strace, binutils (nm,
# for the test that onelogd defines the C allocator), python3-venv.
# From PyPI: python-mysql-replication (the CDC client the tests run), in a virtualenv at
# $HOME/.cache/onelog/pyenv over /usr/bin/python3 that also sees Debian's Python packages
# (the tests use that interpreter when it exists; see crates/server/tests/common).
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

have_cmd clang || need+=(clang)
have_pkg libclang-dev || need+=(libclang-dev)
have_cmd mariadbd || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
have_cmd mariadb || need+=(mariadb-client)
have_cmd mariadb-binlog || need+=(mariadb-client)
have_cmd sysbench || need+=(sysbench)
have_pkg python3-mysqldb || need+=(python3-mysqldb)
have_pkg python3-pymysql || need+=(python3-pymysql)
have_pkg python3-venv || need+=(python3-venv)
have_cmd strace || need+=(strace)
have_cmd nm || need+=(binutils)

if [ ${#need[@]} -gt 0 ]; then
    echo "install-deps: installing ${need[*]}"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}"
fi

PYENV="$HOME/.cache/onelog/pyenv"
if ! "$PYENV/bin/python" -c 'import pymysqlreplication' >/dev/null 2>&1; then
    echo "install-deps: installing mysql-replication (PyPI) into $PYENV"
    [ -x "$PYENV/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$PYENV"
    "$PYENV/bin/python" -m pip install -q --disable-pip-version-check 'mysql-replication>=1.0,<2'
fi

if ! have_cmd cargo; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        :
    else
        echo "install-deps: cargo not found; install Rust with rustup first" >&2
        exit 1
    fi
fi
