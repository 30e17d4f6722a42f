#!/usr/bin/env bash
# bench/cache_session.sh — gpu_cache on the GPU machine (issue 11; bench/
# RESULTS.md §10).  One command per part, each under 10 minutes:
#
#   bench/cache_session.sh test    the cache suite on the real GPU (tests/
#                                  test_cache.py with GPUAGG_TEST_GPU=1:
#                                  every answer bit-identical to the reference,
#                                  faults injected), cache_threads on the GPU,
#                                  compute-sanitizer memcheck, racecheck and
#                                  synccheck over tests/gpu_sanitize_cache.py
#   bench/cache_session.sh bench   bench/cache_bench.py on 1e8 rows: (a) and
#                                  (b) from the GPU and the host cache, (c) the
#                                  load, sum() and the parallel scan in the same
#                                  run; DuckDB too when bench/duckdb/node_modules
#                                  is there (make bench-duckdb-setup, network)
#   bench/cache_session.sh small   the same on 1e7 rows
#
# make test-gpu runs the cache suite with the rest.  CSVs and logs go to $OUT
# (default bench/out): cache_h200_1e8.csv, cache_h200_1e7.csv, test_cache_gpu.log,
# sanitizer_cache_<tool>.log.  The table is made in $DB (default
# /tmp/gpuagg_cache_bench; 1e8 rows: ~2.5 GB) and kept between parts.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
DB=${DB:-/tmp/gpuagg_cache_bench}
mkdir -p "$OUT" "$DB"
source bench/session_env.sh
[ -e libgpuagg.so ] || make -j"$(nproc)" >/dev/null
case "${1:-}" in
test)
  GPUAGG_TEST_GPU=1 SUITES=cache tests/run_all.sh >"$OUT/test_cache_gpu.log" 2>&1
  grep -E '^(FAIL|-- )|passed' "$OUT/test_cache_gpu.log" | tail -12
  make -s -j"$(nproc)" build/harden/cache_threads_gpu >/dev/null &&
    HARDEN_GPU=1 build/harden/cache_threads_gpu | tail -2
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer $tool"
    compute-sanitizer --tool $tool --error-exitcode 9 $PYTHON tests/gpu_sanitize_cache.py \
      >"$OUT/sanitizer_cache_$tool.log" 2>&1
    echo "exit $?"; tail -3 "$OUT/sanitizer_cache_$tool.log"
  done
  ;;
bench)
  $PYTHON bench/cache_bench.py --rows 1e8 --reps 3 --sqlite-b-reps 1 --db "$DB" \
    --machine h200 --csv "$OUT/cache_h200_1e8.csv"
  ;;
small)
  $PYTHON bench/cache_bench.py --rows 1e7 --reps 7 --db "$DB" --machine h200 \
    --csv "$OUT/cache_h200_1e7.csv"
  ;;
*) echo "usage: bench/cache_session.sh test|bench|small" >&2; exit 2 ;;
esac
