#!/usr/bin/env bash
# Keeps the RocksDB static library a source build produced, so later builds link it
# (the Makefile sets ROCKSDB_LIB_DIR to the cache when it holds one).
# Usage: cache-rocksdb.sh TARGET_DIR CACHE_DIR
set -euo pipefail
target=$1
cache=$2
[ -f "$cache/librocksdb.a" ] && exit 0
lib=$(ls -t "$target"/release/build/librocksdb-sys-*/out/librocksdb.a 2>/dev/null | head -n 1 || true)
[ -n "$lib" ] || exit 0
mkdir -p "$cache"
cp "$lib" "$cache/librocksdb.a.tmp"
mv "$cache/librocksdb.a.tmp" "$cache/librocksdb.a"
echo "cached $lib in $cache"
