#!/usr/bin/env bash
# test_install.sh — `make install` / `make uninstall` into a temporary
# DESTDIR: the library lands in $(PREFIX)/lib/sqlite3/, loads from there,
# docs (README, LICENSE, THIRD_PARTY_NOTICES.md) and examples in
# $(PREFIX)/share/doc/gpuagg/, PREFIX is honoured, and
# uninstall leaves no file behind.  Installs $GPUAGG_LIB.so as it is
# (make -o: never rebuilds it).
set -u
SUITE=install
. "$(dirname "$0")/lib.sh"
CHECKS="install_lib install_docs load_installed prefix uninstall"
if ! command -v make >/dev/null 2>&1; then
  for c in $CHECKS; do skip "$c" "no make"; done
  finish
fi
tmp=$(mktemp -d /tmp/gpuagg_install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
so="$LIB.so"
mk() { make --no-print-directory -s -C "$ROOT" -o "$so" LIB="$so" "$@" 2>&1; }

out=$(mk install DESTDIR="$tmp/d")
lib="$tmp/d/usr/local/lib/sqlite3/libgpuagg.so"
if [ -x "$lib" ] && cmp -s "$lib" "$so"; then ok install_lib
else bad install_lib "no executable copy of $so at $lib: $out"; fi

doc="$tmp/d/usr/local/share/doc/gpuagg"
if [ -f "$doc/examples/cli_example.sql" ] && [ -f "$doc/examples/python_example.py" ] &&
   [ -f "$doc/examples/node_example.js" ] && [ -f "$doc/README.md" ] &&
   cmp -s "$doc/LICENSE" "$ROOT/LICENSE" && cmp -s "$doc/THIRD_PARTY_NOTICES.md" "$ROOT/THIRD_PARTY_NOTICES.md"; then ok install_docs
else bad install_docs "missing in $doc: $(cd "$tmp/d" && find . -type f | tr '\n' ' ')"; fi

if command -v "$SQLITE3" >/dev/null 2>&1; then
  r=$("$SQLITE3" -batch -cmd ".load ${lib%.so}" :memory: "SELECT gpuagg_version(), gpu_sum(0.1) FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))" 2>&1)
  check load_installed "$r" "|1.0"
else
  skip load_installed "no sqlite3 shell"
fi

out=$(mk install DESTDIR="$tmp/p" PREFIX=/opt/gpuagg INSTALL_DOCS=0)
if [ -f "$tmp/p/opt/gpuagg/lib/sqlite3/libgpuagg.so" ] && [ ! -e "$tmp/p/opt/gpuagg/share" ]; then ok prefix
else bad prefix "$(cd "$tmp/p" && find . | tr '\n' ' ') $out"; fi

out=$(mk uninstall DESTDIR="$tmp/d"; mk uninstall DESTDIR="$tmp/p" PREFIX=/opt/gpuagg)
left=$(find "$tmp/d" "$tmp/p" -type f)
if [ -z "$left" ]; then ok uninstall; else bad uninstall "left behind: $left $out"; fi
finish
