#!/usr/bin/env bash
# test_npm.sh — the npm package (make npm): its contents, then `npm install`
# of the tarball (offline) into a temporary folder next to better-sqlite3 12,
# gpuagg.load(db) and exact sums, as a user would.
#
# better-sqlite3 is the one tests/hosts/node/run.sh --install put into
# tests/hosts/node/node_modules (make test-hosts does that first): it builds
# from source here, minutes, so it is installed once and linked in.
# Environment: GPUAGG_NPM_TGZ (the tarball; `make test-hosts` builds it and
# sets this; unset: SKIP), GPUAGG_LIB (the packed .so must be this file byte
# for byte), VERBOSE=1.
set -u
SUITE=npm
. "$(dirname "$0")/lib.sh"
tgz=${GPUAGG_NPM_TGZ:-}
if [ -z "$tgz" ] || [ ! -f "$tgz" ]; then
  skip all "no tarball${tgz:+ at $tgz}: make npm builds it, make test-hosts sets GPUAGG_NPM_TGZ"
  finish
fi
tgz=$(cd "$(dirname "$tgz")" && pwd)/$(basename "$tgz")
tmp=$(mktemp -d /tmp/gpuagg_npm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- what is inside ----
mkdir -p "$tmp/x"
if ! tar -xzf "$tgz" -C "$tmp/x" 2>"$tmp/err"; then
  bad contents "cannot unpack $tgz: $(head -c 300 "$tmp/err")"
  finish
fi
p=$tmp/x/package
miss=""
for f in package.json index.js index.d.ts libgpuagg.so README.md LICENSE THIRD_PARTY_NOTICES.md; do
  [ -f "$p/$f" ] || miss="$miss $f"
done
if [ -n "$miss" ]; then bad contents "missing:$miss"
elif ! cmp -s "$p/libgpuagg.so" "$LIB.so"; then bad contents "libgpuagg.so differs from $LIB.so (stale tarball?)"
else ok contents; fi
# both functions typed (no tsc here: the declarations are read, not compiled)
if grep -q 'export declare function getLoadablePath(): string;' "$p/index.d.ts" &&
   grep -q 'export declare function load(' "$p/index.d.ts" &&
   grep -q 'export declare function query(' "$p/index.d.ts" &&
   grep -q 'export declare function queryTable(' "$p/index.d.ts"; then ok types
else bad types "index.d.ts lacks getLoadablePath/load/query/queryTable: $(tr '\n' '|' <"$p/index.d.ts" | head -c 300)"; fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  skip "metadata, install, load, exact" "no node or npm"
  finish
fi
want_v=$("$SQLITE3" -batch -cmd ".load $LIB" :memory: "SELECT gpuagg_version()" 2>&1)
needs=$("$ROOT/pkg/needs.sh" "$p/libgpuagg.so" 2>&1)
meta=$(node -e 'const j = require(process.argv[1]);
  console.log([j.version, j.main, j.types, j.description].join("\n"))' "$p/package.json" 2>&1)
case "$meta" in
  "$want_v"$'\n'index.js$'\n'index.d.ts$'\n'*"needs $needs)") ok metadata ;;
  *) bad metadata "want version $want_v and 'needs $needs' in: $(printf '%s' "$meta" | tr '\n' '|')" ;;
esac

bs3=$ROOT/tests/hosts/node/node_modules/better-sqlite3
if [ ! -f "$bs3/package.json" ] || ! (cd "$bs3/.." && node -e 'new (require("better-sqlite3"))(":memory:")') >/dev/null 2>&1; then
  skip "install, load, exact" "better-sqlite3 is not installed in tests/hosts/node; make test-hosts installs it"
  finish
fi
# a user's folder: the tarball installed by npm (offline: it has no
# dependencies), better-sqlite3 beside it
mkdir -p "$tmp/app"
printf '{ "name": "gpuagg-npm-test", "private": true }\n' >"$tmp/app/package.json"
if (cd "$tmp/app" && npm install --offline --no-audit --no-fund --no-package-lock --loglevel=error "$tgz") \
     >"$tmp/npm.log" 2>&1 && [ -f "$tmp/app/node_modules/gpuagg/index.js" ]; then
  ln -s "$bs3" "$tmp/app/node_modules/better-sqlite3"
  ok install
else
  bad install "$(tail -n 5 "$tmp/npm.log" | tr '\n' '|')"
  finish
fi
cat >"$tmp/app/t.js" <<'JS'
'use strict';
const path = require('path');
const gpuagg = require('gpuagg');
const Database = require('better-sqlite3');
const say = (name, why) => console.log(`${name}: ${why === true ? 'ok' : why}`);
const file = gpuagg.getLoadablePath();
const inApp = file === path.join(__dirname, 'node_modules', 'gpuagg', 'libgpuagg.so');
const db = new Database(':memory:');
try {
  gpuagg.load(db);
  const v = db.prepare('SELECT gpuagg_version()').pluck().get();
  say('load', inApp ? (v === require('gpuagg/package.json').version || `version ${v}`) : `path ${file}`);
} catch (e) { say('load', `${e.name}: ${e.message}`); process.exit(0); }
db.exec('CREATE TABLE t(x)');
const ins = db.prepare('INSERT INTO t VALUES (?)');
for (let i = 0; i < 10; i++) ins.run(0.1);
const a = db.prepare('SELECT gpu_sum(x) FROM t').pluck().get();
const b = db.prepare('SELECT gpu_sum(x) FROM (SELECT ? AS x UNION ALL SELECT ? UNION ALL SELECT ?)')
  .pluck().get(1e100, 1, -1e100);
say('exact', (a === 1 && b === 1) || `0.1 x 10 -> ${a}, (1e100, 1, -1e100) -> ${b}`);
// issue 40: one gpu_query text in one call, quoted by the package
db.exec("CREATE TABLE s(k TEXT, x REAL); INSERT INTO s VALUES ('it''s', 0.1), ('it''s', 0.2), ('b', 1)");
try {
  const r = gpuagg.query(db, "SELECT k, sum(x) AS s FROM s WHERE k <> 'don''t' AND x < ? GROUP BY k ORDER BY k", [0.5]);
  say('query', (r.length === 1 && r[0].k === "it's" && r[0].s === 0.30000000000000004) || JSON.stringify(r));
} catch (e) { say('query', `${e.name}: ${e.message}`); }
JS
out=$(cd "$tmp/app" && node t.js 2>&1)
for c in load exact query; do
  line=$(printf '%s\n' "$out" | grep "^$c: " | head -n 1)
  case "$line" in
    "$c: ok") ok "$c" ;;
    "") bad "$c" "no answer: $(printf '%s' "$out" | tail -c 300 | tr '\n' '|')" ;;
    *) bad "$c" "${line#"$c: "}" ;;
  esac
done
finish
