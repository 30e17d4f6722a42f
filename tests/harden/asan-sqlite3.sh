#!/bin/sh
# asan-sqlite3.sh — the sqlite3 CLI with the ASan runtime preloaded (make test-asan).
LD_PRELOAD="${HARDEN_LIBASAN:?}${LD_PRELOAD:+:$LD_PRELOAD}" exec "${HARDEN_SQLITE3:-sqlite3}" "$@"
