#!/usr/bin/env bash
# Installs what building and testing onelog needs, only when it is missing.
# Debian packages: clang/libclang-dev (RocksDB bindings), MariaDB 10.11 server and client
# tools (baseline and real clients), sysbench, Python connectors, strace, binutils (nm,
# for the test that onelogd defines the C allocator), python3-venv, a JDK and Maven (the
# Connector/J test).
# From PyPI: python-mysql-replication (the CDC client the tests run), SQLAlchemy 2 and
# Alembic (the ORM and migration tests), in a virtualenv at $HOME/.cache/onelog/pyenv over
# /usr/bin/python3 that also sees Debian's Python packages (the tests use that interpreter
# when it exists; see crates/server/tests/common).
# From Maven Central: MariaDB Connector/J 3.5 (the JDBC test), into $HOME/.cache/onelog/jars.
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
have_cmd javac || need+=(default-jdk-headless)
have_cmd mvn || need+=(maven)

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
if ! "$PYENV/bin/python" -c 'import sqlalchemy, alembic' >/dev/null 2>&1; then
    echo "install-deps: installing SQLAlchemy 2 and Alembic (PyPI) into $PYENV"
    [ -x "$PYENV/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$PYENV"
    "$PYENV/bin/python" -m pip install -q --disable-pip-version-check \
        'SQLAlchemy>=2,<3' 'alembic>=1,<2'
fi

# MariaDB Connector/J: the version the JDBC test (crates/server/tests/connector_j.rs) uses.
CONNECTOR_J_VERSION=3.5.7
JARS="$HOME/.cache/onelog/jars"
if [ ! -f "$JARS/mariadb-java-client-$CONNECTOR_J_VERSION.jar" ]; then
    if have_cmd mvn; then
        echo "install-deps: fetching MariaDB Connector/J $CONNECTOR_J_VERSION (Maven) into $JARS"
        mkdir -p "$JARS"
        mvn -q -B dependency:copy \
            -Dartifact="org.mariadb.jdbc:mariadb-java-client:$CONNECTOR_J_VERSION:jar" \
            -DoutputDirectory="$JARS" ||
            echo "install-deps: could not fetch Connector/J; the JDBC test will be skipped" >&2
    else
        echo "install-deps: mvn not found; the Connector/J test will be skipped" >&2
    fi
fi

if ! have_cmd cargo; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        :
    else
        echo "install-deps: cargo not found; install Rust with rustup first" >&2
        exit 1
    fi
fi
