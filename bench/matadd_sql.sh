#!/bin/sh
# bench/matadd_sql.sh — gpu_matadd vs the plain SQL reference query on a
# 1080 x 1920 pair (the seeds' small size), median of 5 runs each, in the
# default config (CPU below cpu_max_rows) and forced onto the GPU.
#
#   SQLITE3=sqlite3 sh bench/matadd_sql.sh [rows cols]
set -eu
cd "$(dirname "$0")/.."
SQLITE3=${SQLITE3:-sqlite3}
ROWS=${1:-1080}
COLS=${2:-1920}
DB=$(mktemp /tmp/matadd_sql.XXXXXX)
trap 'rm -f "$DB"' EXIT INT TERM

"$SQLITE3" "$DB" <<SQL
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 1000000 + 1000003) / 997.0 from generate_series(0, $ROWS - 1) x, generate_series(0, $COLS - 1) y;
insert into b select x.value, y.value, (random() % 1000000 + 1000003) / 983.0 from generate_series(0, $ROWS - 1) x, generate_series(0, $COLS - 1) y;
SQL

# time_query LABEL CONFIG-SQL QUERY: prints the median of 5 "real" times.
time_query() {
  out=$( { printf '.load ./libgpuagg\n%s\n.timer on\n' "$2"
           for k in 1 2 3 4 5; do printf '%s\n' "$3"; done; } |
         "$SQLITE3" "$DB" 2>&1 )
  echo "$out" | grep -q 'rror' && { echo "$1: error: $out" >&2; exit 1; }
  t=$(echo "$out" | sed -n 's/^Run Time: real \([0-9.]*\).*/\1/p' | sort -n | sed -n 3p)
  info=$(echo "$out" | grep -v '^Run Time' | tail -1)
  printf '%-28s %8.3f s   %s\n' "$1" "$t" "$info"
}

Q_GPU="select count(*), sum(v), json_extract(gpu_matadd_info(), '\$.path') from gpu_matadd('a', 'b');"
Q_REF="select count(*), sum(v) from (select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j);"
FORCE="select gpuagg_config('device', 'gpu'), gpuagg_config('cpu_max_rows', '0');"

echo "gpu_matadd vs plain SQL, ${ROWS}x${COLS} doubles, median of 5 (seconds)"
time_query "reference SQL (GROUP BY)" "" "$Q_REF"
time_query "gpu_matadd (default)" "" "$Q_GPU"
time_query "gpu_matadd (forced gpu)" "$FORCE" "$Q_GPU"
