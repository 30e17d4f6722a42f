#!/bin/sh
# pkg/stage.sh SRC DEST [KEY=VALUE]... — copy the package template SRC to a
# fresh DEST; every file NAME.in becomes NAME with each @KEY@ replaced by its
# VALUE.  A placeholder left unreplaced is an error, so a template cannot ship
# a literal "@VERSION@".  Used by mk/wheel.mk and mk/npm.mk.
set -eu
src=${1:?usage: pkg/stage.sh SRC DEST [KEY=VALUE]...}
dest=${2:?usage: pkg/stage.sh SRC DEST [KEY=VALUE]...}
shift 2
rm -rf "$dest"
mkdir -p "$dest"
(cd "$src" && tar -cf - --exclude='__pycache__' --exclude='*.pyc' .) | (cd "$dest" && tar -xf -)
find "$dest" -type f -name '*.in' | while IFS= read -r t; do
  out=${t%.in}
  cp "$t" "$out"
  for kv in "$@"; do
    key=${kv%%=*} val=${kv#*=}
    # escape what sed's replacement treats specially: \ & and the | delimiter
    esc=$(printf '%s' "$val" | sed 's/[\\&|]/\\&/g')
    sed "s|@$key@|$esc|g" "$out" >"$out.tmp" && mv "$out.tmp" "$out"
  done
  rm -f "$t"
  if grep -n '@[A-Z_][A-Z_]*@' "$out" >&2; then
    echo "stage.sh: unreplaced placeholder in $out (above)" >&2
    exit 1
  fi
done
