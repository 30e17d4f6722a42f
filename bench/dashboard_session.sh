#!/usr/bin/env bash
# bench/dashboard_session.sh — issue 37's GPU-machine goals for the dashboard
# set (bench/RESULTS.md §18, §22): one command per part, each under the
# device tool's 10 minutes.
#
#   bench/dashboard_session.sh scan   lineitem at $ROWS (default 6e7, made in
#                                     $DB): SQLite's own text in the first rep
#                                     only (it takes a minute a query), gpu_query
#                                     through the scan at 16 threads and from
#                                     the GPU entry, $REPS reps; then each
#                                     query's GPU-entry step times
#                                     (GPUAGG_CACHE_PROFILE)
#   bench/dashboard_session.sh test   make test-gpu (every SQL suite forced
#                                     onto the GPU), summary lines only
#   bench/dashboard_session.sh cachetest  the GPU entry's suites only (cache,
#                                     query_cache, query_json, analysts,
#                                     query_errors on the GPU; the DISTINCT
#                                     and many-groups sections), then
#                                     compute-sanitizer memcheck
#   bench/dashboard_session.sh cachebench  from the GPU entry at $ROWS:
#                                     l_distinct (dashboard_bench; SQLite's
#                                     time is the scan part's), d4, d5
#                                     (query_bench, the same table), then
#                                     each one's GPU steps
#
# CSVs and logs go to $OUT (default bench/out).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
DB=${DB:-/tmp/gpuagg_dashboard_bench}
ROWS=${ROWS:-6e7}
REPS=${REPS:-5}
Q=${Q:-l_distinct,l_month}
mkdir -p "$OUT" "$DB"
source bench/session_env.sh
[ -e libgpuagg.so ] || make -j"$(nproc)" GENCODE=-gencode=arch=compute_90,code=sm_90 >/dev/null
D="$PYTHON bench/dashboard_bench.py --set lineitem --rows $ROWS --db $DB --queries $Q"
case "${1:-}" in
scan)
  $D --modes sqlite,gpu_query,cache --reps "$REPS" --sqlite-reps 1 --threads 16 \
    --machine gpu --csv "$OUT/dashboard_gpu.csv" 2>&1 | tail -12
  for q in ${Q//,/ }; do
    GPUAGG_CACHE_PROFILE=1 $PYTHON bench/cache_profile.py --rows "$ROWS" --db "$DB" \
      --query "$q" --reps 3 >"$OUT/profile_$q.log" 2>&1
    tail -30 "$OUT/profile_$q.log"
  done
  ;;
test)
  GPUAGG_TEST_GPU=1 tests/run_all.sh >"$OUT/test_gpu.log" 2>&1
  grep -E '^(FAIL|-- )|passed' "$OUT/test_gpu.log" | tail -25
  ;;
cachetest)
  G="env GPUAGG_TEST_GPU=1"
  $G CACHE_DEVICES=gpu CACHE_ONLY="distinct distinct_gpu many topk merge_levels" \
    $PYTHON tests/test_cache.py >"$OUT/cache_gpu_sections.log" 2>&1
  grep -E '^FAIL|^RESULT' "$OUT/cache_gpu_sections.log" | tail -8
  $G CACHE=1 QUERIES=300 $PYTHON tests/test_query.py >"$OUT/query_cache_gpu.log" 2>&1
  grep -E '^FAIL|^RESULT|^# (gdist|many)' "$OUT/query_cache_gpu.log" | tail -12
  $G SUITES="cache query_errors query_json analysts" tests/run_all.sh >"$OUT/suites_gpu.log" 2>&1
  grep -E '^FAIL|^-- ' "$OUT/suites_gpu.log" | tail -12
  GPUAGG_SANITIZE_ROWS=100000 compute-sanitizer --tool memcheck --error-exitcode 9 \
    $PYTHON tests/gpu_sanitize_cache.py >"$OUT/memcheck_cache.log" 2>&1
  echo "memcheck exit $?"; tail -2 "$OUT/memcheck_cache.log"
  ;;
cachebench)
  $PYTHON bench/dashboard_bench.py --set lineitem --rows $ROWS --db $DB --queries l_distinct \
    --modes cache --reps "$REPS" --threads 16 --machine gpu \
    --csv "$OUT/dashboard_gpu_cache.csv" 2>&1 | tail -4
  $PYTHON bench/query_bench.py --rows "$ROWS" --reps "$REPS" --modes cache --no-ref \
    --queries d4,d5 --db "$DB" --machine gpu --load-reps 1 --threads 16 \
    --csv "$OUT/query_gpu_many.csv" 2>&1 | grep -v "^# check" | tail -8
  for q in l_distinct d5 d4; do
    GPUAGG_CACHE_PROFILE=1 $PYTHON bench/cache_profile.py --rows "$ROWS" --db "$DB" \
      --query "$q" --reps 2 >"$OUT/profile_$q.log" 2>&1
    tail -14 "$OUT/profile_$q.log"
  done
  ;;
*) echo "usage: bench/dashboard_session.sh scan|test|cachetest|cachebench" >&2; exit 2 ;;
esac
