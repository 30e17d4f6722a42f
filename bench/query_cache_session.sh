#!/usr/bin/env bash
# bench/query_cache_session.sh — gpu_query from the GPU cache on the GPU
# machine (issue 20; bench/RESULTS.md §13).  One command per part, each under
# 10 minutes of the device tool:
#
#   bench/query_cache_session.sh test    the cache suites with GPU entries
#                                        (cache, query_cache: GPUAGG_TEST_GPU=1),
#                                        compute-sanitizer memcheck over
#                                        tests/gpu_sanitize_cache.py
#   bench/query_cache_session.sh check   racecheck and synccheck over the same
#                                        ($TOOLS), then gpu and gpu_faults
#   bench/query_cache_session.sh bench   bench/query_bench.py --modes cache over
#                                        6e7 rows (checked against the uncached
#                                        gpu_query), then the Q1 profile
#
# CSVs and logs go to $OUT (default bench/out).  The table is made in $DB
# (default /tmp/gpuagg_query_bench; 6e7 rows: about 8 GB, a minute on 16
# cores) and kept between parts while the machine stays warm.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
DB=${DB:-/tmp/gpuagg_query_bench}
ROWS=${ROWS:-6e7}
mkdir -p "$OUT" "$DB"
source bench/session_env.sh
[ -e libgpuagg.so ] || make -j"$(nproc)" >/dev/null
case "${1:-}" in
test)
  GPUAGG_TEST_GPU=1 SUITES="cache query_cache" tests/run_all.sh >"$OUT/test_cache_gpu.log" 2>&1
  grep -E '^(FAIL|-- )|passed' "$OUT/test_cache_gpu.log" | tail -8
  echo "== compute-sanitizer memcheck"
  GPUAGG_SANITIZE_ROWS=200000 compute-sanitizer --tool memcheck --error-exitcode 9 \
    $PYTHON tests/gpu_sanitize_cache.py >"$OUT/sanitizer_cache_memcheck.log" 2>&1
  echo "exit $?"; tail -3 "$OUT/sanitizer_cache_memcheck.log"
  ;;
check)
  for tool in ${TOOLS:-racecheck synccheck}; do
    echo "== compute-sanitizer $tool"
    GPUAGG_SANITIZE_ROWS=100000 compute-sanitizer --tool $tool --error-exitcode 9 \
      $PYTHON tests/gpu_sanitize_cache.py >"$OUT/sanitizer_cache_$tool.log" 2>&1
    echo "exit $?"; tail -3 "$OUT/sanitizer_cache_$tool.log"
  done
  GPUAGG_TEST_GPU=1 SUITES="gpu gpu_faults" tests/run_all.sh >"$OUT/test_gpu.log" 2>&1
  grep -E '^(FAIL|-- )|passed' "$OUT/test_gpu.log" | tail -6
  ;;
bench)
  $PYTHON bench/query_bench.py --rows "$ROWS" --reps 7 --modes cache --no-ref \
    --queries q1,q6,d1,d3 --db "$DB" --machine h200 --load-reps 1 \
    --csv "$OUT/query_cache_h200.csv" 2>&1 | grep -v "^# check" | tail -20
  GPUAGG_CACHE_PROFILE=1 $PYTHON bench/cache_profile.py --rows "$ROWS" --query q1 \
    --db "$DB" 2>&1 | tail -24
  ;;
*) echo "usage: bench/query_cache_session.sh test|check|bench" >&2; exit 2 ;;
esac
