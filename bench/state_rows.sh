#!/usr/bin/env bash
# bench/state_rows.sh — per-row cost of gpu_aggregate's fused worker
# aggregate gpuagg_partial(x) (make bench-state).
#
# For each column kind (int, real, mixed) and query (builtin: count(*),
# count(x), sum, min, max; fused: gpuagg_partial; gpu: count(*), count(x),
# gpu_sum, gpu_min, gpu_max; sum: sum(x) alone; fused_buf: gpuagg_partial
# built with GA_FUSED_BUFFER):
#   - instructions per row under callgrind (deterministic; only run_query()
#     counted), IR_ROWS rows -> $OUT/state_rows_ir.csv
#   - wall ns per row, median of REPS runs, NS_ROWS rows, queries
#     alternating -> $OUT/state_rows_ns.csv
# Environment: BENCH_BUILD (default build), OUT (default bench/results),
# IR_ROWS (200000), NS_ROWS (2000000), REPS (7), TMPDIR.
set -eu
cd "$(dirname "$0")/.."
B=${BENCH_BUILD:-build}/bench
OUT=${OUT:-bench/results}
IR_ROWS=${IR_ROWS:-200000}
NS_ROWS=${NS_ROWS:-2000000}
REPS=${REPS:-7}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/state_rows.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
bin() { if [ "$1" = fused_buf ]; then echo "$B/state_rows_buf"; else echo "$B/state_rows"; fi; }
qry() { if [ "$1" = fused_buf ]; then echo fused; else echo "$1"; fi; }
QUERIES="builtin fused fused_buf gpu sum"

echo "query,kind,rows,ir_per_row" >"$OUT/state_rows_ir.csv"
for kind in int real mixed; do
  "$B/state_rows" "$TMP/ir_$kind.db" "$IR_ROWS" "$kind" sum 1 >/dev/null # fill once
  for q in $QUERIES; do
    valgrind --tool=callgrind --toggle-collect=run_query --callgrind-out-file="$TMP/cg.out" \
      "$(bin $q)" "$TMP/ir_$kind.db" "$IR_ROWS" "$kind" "$(qry $q)" 1 >/dev/null 2>"$TMP/cg.log"
    ir=$(sed -n 's/^summary: //p' "$TMP/cg.out")
    # the warm-up run and one timed run were collected: two passes
    echo "$q,$kind,$IR_ROWS,$(awk -v i="$ir" -v n="$IR_ROWS" 'BEGIN { printf "%.1f", i / (2 * n) }')" |
      tee -a "$OUT/state_rows_ir.csv"
  done
done

echo "query,kind,rows,ns_per_row,round" >"$OUT/state_rows_ns.csv"
for kind in int real mixed; do
  "$B/state_rows" "$TMP/ns_$kind.db" "$NS_ROWS" "$kind" sum 1 >/dev/null
  for round in 1 2 3; do # alternate the queries: this machine's load comes in bursts
    for q in $QUERIES; do
      line=$("$(bin $q)" "$TMP/ns_$kind.db" "$NS_ROWS" "$kind" "$(qry $q)" "$REPS")
      echo "${line/#fused,/$q,},$round" | tee -a "$OUT/state_rows_ns.csv"
    done
  done
done
