#!/usr/bin/env bash
# cpu_sum_ab.sh — A/B of engine/reduce/cpu_sum.c between two git revisions (or the
# working tree, "."), in one process (bench/cpu_sum_ab.c): the issue 13
# optimisation steps, each against the step before, measured side by side.
#
#   bench/cpu_sum_ab.sh [--csv FILE] [--reps R] [--log2n N] \
#       REV_A[:VARIANT] REV_B[:VARIANT] [REV_A:VARIANT REV_B:VARIANT ...]
#
# Pairs of arguments; VARIANT defaults to "best" (what ga_cpu_sum uses at
# that revision).  Each revision's cpu_sum.c is compiled against the working
# tree's headers (its API has not changed), with its exported names
# prefixed A_ or B_.  The CSV (appended; header written when new) has
# label, data, a, b, log2n, a_x_plain, b_x_plain, b_over_a.
set -u
cd "$(dirname "$0")/.." || exit 2
CSV= REPS=11 LOG2N=25 ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --csv) CSV=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --log2n) LOG2N=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
[ $((${#ARGS[@]} % 2)) -eq 0 ] && [ ${#ARGS[@]} -gt 0 ] || { echo "usage: bench/cpu_sum_ab.sh [--csv FILE] A B [A B ...]" >&2; exit 2; }
CC=${CC:-cc}
TMP=$(mktemp -d /tmp/cpu_sum_ab.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
NAMES="ga_cpu_sum_reals ga_cpu_sum_nvariants ga_cpu_sum_variant_name ga_cpu_sum_variant_ok ga_cpu_sum_variant_best ga_cpu_sum_variant"
build() { # rev, prefix -> object
  local rev=$1 pre=$2 src=$TMP/$2.c defs=()
  if [ "$rev" = . ]; then cp engine/reduce/cpu_sum.c "$src"
  else git show "$rev:engine/reduce/cpu_sum.c" >"$src" || return 1; fi
  for f in $NAMES; do defs+=("-D$f=$pre$f"); done
  $CC -std=c11 -O2 -D_GNU_SOURCE -Iengine "${defs[@]}" -c -o "$TMP/$pre.o" "$src"
}
if [ -n "$CSV" ] && [ ! -s "$CSV" ]; then
  mkdir -p "$(dirname "$CSV")"
  echo "label,data,a,b,log2n,a_x_plain,b_x_plain,b_over_a" >"$CSV"
fi
set -- "${ARGS[@]}"
while [ $# -ge 2 ]; do
  a=$1 b=$2
  shift 2
  ra=${a%%:*} rb=${b%%:*}
  va=best vb=best
  [ "$ra" != "$a" ] && va=${a#*:}
  [ "$rb" != "$b" ] && vb=${b#*:}
  build "$ra" A_ && build "$rb" B_ || exit 1
  $CC -std=c11 -O2 -D_GNU_SOURCE -Iengine -Ibench -o "$TMP/ab" bench/cpu_sum_ab.c \
    "$TMP/A_.o" "$TMP/B_.o" engine/reduce/xacc.c -lm || exit 1
  label="$(git rev-parse --short "$ra" 2>/dev/null || echo "$ra") -> $(git rev-parse --short "$rb" 2>/dev/null || echo "$rb")"
  [ "$ra" = . ] && label=". -> $rb"
  [ "$rb" = . ] && label="${label% -> *} -> ."
  "$TMP/ab" "$va" "$vb" --reps "$REPS" --log2n "$LOG2N" --label "$label" \
    ${CSV:+--csv "$CSV"} || exit 1
done
