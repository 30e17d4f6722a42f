#!/usr/bin/env bash
# test_wheel.sh — the Python package (make wheel): its contents, then
# `pip install --no-index` into a fresh venv of $PYTHON (/usr/bin/python3),
# gpuagg.load(conn), exact sums, and `pip uninstall`.
#
# Environment: GPUAGG_WHEEL (the .whl; `make test` builds it and sets this;
# unset: every check SKIPs), GPUAGG_LIB (the wheel's .so must be this file
# byte for byte, so a stale wheel fails), PYTHON, VERBOSE=1.
# A Python without the venv module (Debian: python3-venv) gives SKIP lines.
set -u
SUITE=wheel
. "$(dirname "$0")/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
whl=${GPUAGG_WHEEL:-}
if [ -z "$whl" ] || [ ! -f "$whl" ]; then
  skip all "no wheel${whl:+ at $whl}: make wheel builds it, make test sets GPUAGG_WHEEL"
  finish
fi
tmp=$(mktemp -d /tmp/gpuagg_wheel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- what is inside: the .so we built, the legal files, honest tags ----
mkdir -p "$tmp/x"
if ! "$PY" -m zipfile -e "$whl" "$tmp/x" 2>"$tmp/err"; then
  bad contents "cannot unpack $whl: $(head -c 300 "$tmp/err")"
else
  di=$(ls -d "$tmp"/x/gpuagg-*.dist-info 2>/dev/null | head -n 1)
  miss=""
  for f in gpuagg/__init__.py gpuagg/libgpuagg.so "${di#"$tmp/x/"}/LICENSE" "${di#"$tmp/x/"}/THIRD_PARTY_NOTICES.md"; do
    [ -f "$tmp/x/$f" ] || miss="$miss $f"
  done
  if [ -n "$miss" ]; then bad contents "missing:$miss"
  elif ! cmp -s "$tmp/x/gpuagg/libgpuagg.so" "$LIB.so"; then bad contents "gpuagg/libgpuagg.so differs from $LIB.so (stale wheel?)"
  else ok contents; fi
  # file name tag == WHEEL's Tag, not pure, and not "any" (the .so is native)
  tag=$(basename "$whl" .whl | cut -d- -f3-)
  w=$(cat "$di/WHEEL" 2>/dev/null)
  case "$tag" in
    *-any | *none-any) bad tags "platform tag '$tag' claims any platform" ;;
    *) case "$w" in
         *"Root-Is-Purelib: false"*"Tag: $tag"*) ok tags ;;
         *) bad tags "file tag $tag, WHEEL: $(echo "$w" | tr '\n' '|')" ;;
       esac ;;
  esac
  # the version is gpuagg_version() and the stated needs are measured
  want_v=$("$SQLITE3" -batch -cmd ".load $LIB" :memory: "SELECT gpuagg_version()" 2>&1)
  needs=$("$ROOT/pkg/needs.sh" "$tmp/x/gpuagg/libgpuagg.so" 2>&1)
  meta=$(cat "$di/METADATA" 2>/dev/null)
  case "$meta" in
    *"Version: $want_v"*"needs $needs)"*"License-File: LICENSE"*) ok metadata ;;
    *) bad metadata "want Version: $want_v and 'needs $needs' in: $(echo "$meta" | head -n 8 | tr '\n' '|')" ;;
  esac
fi

# ---- install into a fresh venv, use, uninstall ----
# (Debian's python3 without python3-venv: no venv module, or an ensurepip
# that refuses to run; either is a SKIP that names the package, not a pass)
if "$PY" -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1; then ok venv
elif grep -q -i -E 'ensurepip|python3-venv|No module named venv' "$tmp/venv.log"; then
  skip "venv, install, load, exact, load_disabled, uninstall" \
    "$PY cannot make a venv with pip (Debian: apt-get install python3-venv)"
  finish
else
  bad venv "$PY -m venv failed: $(tail -n 3 "$tmp/venv.log" | tr '\n' '|')"
  finish
fi
vpy=$tmp/venv/bin/python
if "$vpy" -m pip install --no-index --no-deps --disable-pip-version-check "$whl" >"$tmp/pip.log" 2>&1; then ok install
else bad install "$(tail -n 5 "$tmp/pip.log" | tr '\n' '|')"; fi

# (run from $tmp, so that `import gpuagg` can only find the installed one)
out=$(cd "$tmp" && "$vpy" - "$tmp/venv" <<'PY' 2>&1
import os, sqlite3, sys
venv = os.path.realpath(sys.argv[1])
try:
    import gpuagg
except Exception as e:
    print("load: import gpuagg: %r" % e); sys.exit(0)
p = gpuagg.loadable_path()
if not (os.path.realpath(p).startswith(venv + os.sep) and os.path.isfile(p + ".so")):
    print("load: loadable_path() %r is not a .so inside the venv" % p)
con = sqlite3.connect(":memory:")
try:
    gpuagg.load(con)
except Exception as e:
    print("load: gpuagg.load: %r" % e); sys.exit(0)
v = con.execute("SELECT gpuagg_version()").fetchone()[0]
print("load: ok" if v == gpuagg.__version__ else "load: version %r, module says %r" % (v, gpuagg.__version__))
con.execute("CREATE TABLE t(x)")
con.executemany("INSERT INTO t VALUES (?)", [(0.1,)] * 10)
a = con.execute("SELECT gpu_sum(x) FROM t").fetchone()[0]
b = con.execute("SELECT gpu_sum(x) FROM (SELECT 1e100 AS x UNION ALL SELECT 1 UNION ALL SELECT -1e100)").fetchone()[0]
print("exact: ok" if (a, b) == (1.0, 1.0) else "exact: 0.1 x 10 -> %r, (1e100, 1, -1e100) -> %r" % (a, b))
# load() must leave extension loading disabled
try:
    con.load_extension(p)
    print("load_disabled: load_extension still allowed after gpuagg.load")
except sqlite3.OperationalError as e:
    print("load_disabled: ok" if "not authorized" in str(e) else "load_disabled: %s" % e)
# a Python whose sqlite3 cannot load extensions (its connections have no
# enable_load_extension): a clear error naming what to do, not AttributeError
class NoLoading:
    pass
try:
    gpuagg.load(NoLoading())
    print("friendly_error: no error")
except gpuagg.ExtensionLoadingUnavailable as e:
    m = str(e)
    print("friendly_error: ok" if m.startswith("gpuagg.load: ") and "/usr/bin/python3" in m
          and "loadable_path()" in m else "friendly_error: %s" % m)
except Exception as e:
    print("friendly_error: %r" % e)
PY
)
for c in load exact load_disabled friendly_error; do
  line=$(printf '%s\n' "$out" | grep "^$c: " | head -n 1)
  case "$line" in
    "$c: ok") ok "$c" ;;
    "") bad "$c" "no answer: $(printf '%s' "$out" | tail -c 300 | tr '\n' '|')" ;;
    *) bad "$c" "${line#"$c: "}" ;;
  esac
done

"$vpy" -m pip uninstall -y gpuagg >"$tmp/un.log" 2>&1
left=$(find "$tmp/venv/lib" -path '*site-packages/gpuagg*' 2>/dev/null)
if [ -z "$left" ]; then ok uninstall; else bad uninstall "left behind: $left"; fi
finish
