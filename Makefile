# onelog: `make run` starts a server on ./data, `make test` runs every test.
# One cargo profile (release) serves tests and benchmarks, in a target directory outside
# the clone, so RocksDB's C++ build happens once per machine.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TARGET_DIR ?= $(HOME)/.cache/onelog/target
CARGO ?= cargo
# RocksDB's C++ library, once built, is kept beside the target directory and linked from
# there (ROCKSDB_LIB_DIR), so neither a new target directory nor a change of build
# environment compiles it again.
ROCKSDB_CACHE := $(HOME)/.cache/onelog/rocksdb-lib
ifneq ($(wildcard $(ROCKSDB_CACHE)/librocksdb.a),)
export ROCKSDB_LIB_DIR ?= $(ROCKSDB_CACHE)
export ROCKSDB_STATIC ?= 1
endif
BIN := $(CARGO_TARGET_DIR)/release
DATADIR ?= $(CURDIR)/data
PORT ?= 3307
SOCKET ?= /tmp/onelog.sock

.PHONY: deps build run test soak check fmt clippy bench bench-quick bench-io clean

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace --bins
	@scripts/cache-rocksdb.sh "$(CARGO_TARGET_DIR)" "$(ROCKSDB_CACHE)"

run: build
	@echo "onelogd: datadir $(DATADIR), port $(PORT), socket $(SOCKET)"
	@echo "connect: mariadb -uroot -S $(SOCKET)    or    mariadb -uroot -h127.0.0.1 -P$(PORT)"
	$(BIN)/onelogd --datadir=$(DATADIR) --port=$(PORT) --socket=$(SOCKET)

test: deps
	$(CARGO) build --release --workspace --bins
	@scripts/cache-rocksdb.sh "$(CARGO_TARGET_DIR)" "$(ROCKSDB_CACHE)"
	$(CARGO) test --release --workspace --no-fail-fast

# Random queries on onelogd and MariaDB side by side, longer than in `make test`, with a
# new seed each run (printed first; ONELOG_RANDQ_SEED=... replays one).
SOAK_N ?= 20000
soak: deps
	$(CARGO) build --release --workspace --bins
	ONELOG_RANDQ_SEED=$${ONELOG_RANDQ_SEED:-$$(date +%s)} ONELOG_RANDQ_N=$(SOAK_N) \
	  $(CARGO) test --release -p onelog-server --test random_queries -- --ignored --nocapture

fmt:
	$(CARGO) fmt --all -- --check

clippy: deps
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

check: deps fmt clippy test

bench: build
	$(BIN)/onelog bench all --out docs/BENCHMARKS.md

bench-quick: build
	$(BIN)/onelog bench all --quick --out docs/BENCHMARKS.md

# The IO-bound size: 16 MiB caches, O_DIRECT reads, tables 7-36x the cache (about 30 minutes).
bench-io: build
	for d in 1000 0; do for c in 1 16; do \
	  rows=$$( [ $$c = 1 ] && echo 400000 || echo 100000 ); \
	  sfx=$$( [ $$d = 0 ] && echo -nodelay ); \
	  $(BIN)/onelog bench insert-benchmark --system onelog-engine,mariadb-binlog --clients $$c \
	    --rows $$rows --query-seconds 10 --delay-us $$d --cache-size 16M --direct-reads \
	    --out docs/io-bound/insert-benchmark-c$$c$$sfx.md || exit 1; \
	done; done

clean:
	$(CARGO) clean
