#!/bin/sh
# pkg/release.sh DIST TITLE FILE... — the closing summary of `make release`:
# one line per FILE with its size in bytes and its sha256, and DIST/SHA256SUMS
# (sha256sum format, names relative to DIST) for the files that lie in DIST.
set -eu
dist=${1:?usage: pkg/release.sh DIST TITLE FILE...}
title=${2:?usage: pkg/release.sh DIST TITLE FILE...}
shift 2
echo "$title"
printf '  %10s  %-64s  %s\n' bytes sha256 file
: >"$dist/SHA256SUMS.tmp"
for f in "$@"; do
  sum=$(sha256sum "$f" | cut -d' ' -f1)
  printf '  %10s  %s  %s\n' "$(wc -c <"$f" | tr -d ' ')" "$sum" "$f"
  case $f in
    "$dist"/*) printf '%s  %s\n' "$sum" "${f#"$dist"/}" >>"$dist/SHA256SUMS.tmp" ;;
  esac
done
mv "$dist/SHA256SUMS.tmp" "$dist/SHA256SUMS"
echo "  (sha256sum -c: cd $dist && sha256sum -c SHA256SUMS)"
