#!/usr/bin/env bash
# cpu_reduce_runs.sh — build/bench/cpu_reduce run several times (one process
# each), then one CSV of the medians over the runs: on a shared machine a
# burst of load can spoil one run, rarely the median of several.
#
#   bench/cpu_reduce_runs.sh [RUNS] [OUT.csv] [-- cpu_reduce args...]
#
# Defaults: 3 runs, bench/out/cpu_reduce.csv, cpu_reduce's defaults with
# --reps 11.  Each run's CSV is kept beside OUT (OUT minus .csv, _runK.csv).
# OUT's columns: cpu_reduce's (median over runs of median_ms, gbps,
# ns_per_value, x_plain; checked is WRONG if any run's was) plus runs,
# x_plain_lo, x_plain_hi (the smallest and largest run's x_plain).  A run
# that finds a wrong result stops the script with its status.
set -u
cd "$(dirname "$0")/.." || exit 2
RUNS=${1:-3}
OUT=${2:-bench/out/cpu_reduce.csv}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--reps 11)
BIN=${BENCH_BUILD:-build}/bench/cpu_reduce
make -s CUDA=0 "$BIN" || exit 1
mkdir -p "$(dirname "$OUT")"
files=()
for k in $(seq 1 "$RUNS"); do
  f=${OUT%.csv}_run$k.csv
  echo "== run $k of $RUNS ($(cut -d' ' -f1-3 /proc/loadavg) load)"
  "$BIN" --csv "$f" "${ARGS[@]}" | tail -n +2 >/dev/null || exit 1
  files+=("$f")
done
"${PYTHON:-/usr/bin/python3}" - "$OUT" "${files[@]}" <<'EOF'
import csv, statistics, sys
out, files = sys.argv[1], sys.argv[2:]
runs = [list(csv.DictReader(open(f))) for f in files]
key = lambda r: (r["data"], r["kernel"], r["size"])
rows = []
for r0 in runs[0]:
    same = [r for run in runs for r in run if key(r) == key(r0)]
    x = [float(r["x_plain"]) for r in same]
    checks = {r.get("checked", "-") for r in same}
    rows.append({**{k: r0[k] for k in ("data", "kernel", "size", "n")},
                 "median_ms": "%.4f" % statistics.median(float(r["median_ms"]) for r in same),
                 "gbps": "%.2f" % statistics.median(float(r["gbps"]) for r in same),
                 "ns_per_value": "%.3f" % statistics.median(float(r["ns_per_value"]) for r in same),
                 "x_plain": "%.3f" % statistics.median(x),
                 "checked": "WRONG" if "WRONG" in checks else min(checks),
                 "clock": r0["clock"],
                 "runs": len(same), "x_plain_lo": "%.3f" % min(x), "x_plain_hi": "%.3f" % max(x)})
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
print("%-9s %-24s %10s %8s %8s  %s" % ("data", "kernel", "size", "GB/s", "x_plain", "runs lo..hi"))
for r in rows:
    print("%-9s %-24s %10s %8s %8s  %s..%s" % (r["data"], r["kernel"], r["size"], r["gbps"],
          r["x_plain"], r["x_plain_lo"], r["x_plain_hi"]))
EOF
