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
*) echo "usage: bench/dashboard_session.sh scan|test" >&2; exit 2 ;;
esac
