#!/usr/bin/env bash
# bench/aggregate_session.sh — gpu_aggregate's benchmark on the GPU machine
# (16 cores; bench/RESULTS.md §8).  Two parts, each under 10 minutes:
#
#   bench/aggregate_session.sh big     1e8 REAL rows: sum() against
#                                      gpu_aggregate at 1, 2, 4, 8, 16 threads,
#                                      and the scan_min_rows crossover
#   bench/aggregate_session.sh small   1e7 rows: sum, group100, group1e5 and
#                                      filter at 1, 2, 4, 8, 16 threads
#   bench/aggregate_session.sh sparse  1e7 rows: filter (50%) and filter1pct
#                                      (1%: every piece sparse) at 1..16 threads
#   bench/aggregate_session.sh mmap    1e8 rows, sum at 8 and 16 threads with
#                                      the workers reading through mmap
#                                      (GPUAGG_SCAN_MMAP, an experiment: is it
#                                      worth a default?)
#
# CSVs go to $OUT (default bench/out): aggregate_h200_1e8.csv,
# aggregate_crossover_h200.csv, aggregate_h200_1e7.csv,
# aggregate_h200_1e8_mmap.csv.  Tables are made in
# $DB (default /tmp/aggb; 1e8 rows take ~1.5 GB, 1e7 rows ~0.4 GB) and kept
# for the next part.  The extension is built first when missing.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
DB=${DB:-/tmp/aggb}
PY=${PYTHON:-/usr/bin/python3}
THREADS=${THREADS:-1,2,4,8,16}
mkdir -p "$OUT" "$DB"
source bench/session_env.sh
[ -e libgpuagg.so ] || make -j"$(nproc)" >/dev/null
case "${1:-}" in
  big)
    "$PY" bench/aggregate_bench.py --rows 1e8 --cases sum --threads "$THREADS" --reps 3 \
      --db "$DB" --csv "$OUT/aggregate_h200_1e8.csv" --machine h200
    "$PY" bench/aggregate_bench.py --crossover --threads 16 --reps 9 \
      --db "$DB" --csv "$OUT/aggregate_crossover_h200.csv" --machine h200
    ;;
  small)
    "$PY" bench/aggregate_bench.py --rows 1e7 --threads "$THREADS" --reps 3 \
      --db "$DB" --csv "$OUT/aggregate_h200_1e7.csv" --machine h200
    ;;
  sparse)
    # issue 22: the sparse-rowid probes run under the dispenser mutex; a 1%
    # filter makes every piece sparse.  Same-run ratio against 50% (filter).
    "$PY" bench/aggregate_bench.py --rows 1e7 --cases filter,filter1pct --threads "$THREADS" \
      --reps 3 --db "$DB" --csv "$OUT/aggregate_h200_sparse.csv" --machine h200
    ;;
  mmap)
    GPUAGG_SCAN_MMAP=68719476736 "$PY" bench/aggregate_bench.py --rows 1e8 --cases sum \
      --threads 8,16 --reps 3 --db "$DB" --csv "$OUT/aggregate_h200_1e8_mmap.csv" --machine h200-mmap
    ;;
  *) echo "usage: bench/aggregate_session.sh big|small|mmap" >&2; exit 2 ;;
esac
