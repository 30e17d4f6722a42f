#!/usr/bin/env bash
# tests/hosts/node/run.sh [--install] — the Node.js host test.
#
# better-sqlite3 12.x lives in tests/hosts/node/node_modules (gitignored).
# With --install (make test-hosts) it is installed there with npm first when
# missing: a prebuilt binary, or a build from source with node-gyp
# (python3, make, g++), several minutes on a small machine.  Without node,
# npm or the registry, or without --install and nothing installed, it prints
# SKIP and succeeds.  NPM_TIMEOUT (seconds, default 1200) bounds the install.
set -u
cd "$(dirname "$0")" || exit 2
skip() {
  echo "SKIP: [node] all ($1)"
  echo "RESULT node: 0 passed, 0 failed, 1 skipped"
  exit 0
}
command -v node >/dev/null 2>&1 || skip "no node"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 18 ] 2>/dev/null || skip "node $(node --version) is too old for better-sqlite3 12 (needs 18+)"
if [ ! -f node_modules/better-sqlite3/package.json ] ||
   ! node -e 'require("better-sqlite3")' >/dev/null 2>&1; then
  # without it, test_node.js runs what needs no better-sqlite3 and SKIPs the rest
  [ "${1:-}" = --install ] || exec node test_node.js
  command -v npm >/dev/null 2>&1 || skip "no npm"
  log=${TMPDIR:-/tmp}/gpuagg-npm-install.log
  echo "# npm install better-sqlite3@12 into tests/hosts/node/node_modules (may build from source: minutes)"
  if ! timeout "${NPM_TIMEOUT:-1200}" npm install --no-audit --no-fund --no-package-lock \
       --loglevel=error >"$log" 2>&1; then
    tail -5 "$log" | sed 's/^/# /'
    skip "npm install better-sqlite3@12 failed or timed out (registry unreachable?); see $log"
  fi
  node -e 'require("better-sqlite3")' >/dev/null 2>&1 || skip "better-sqlite3 installed but does not load"
fi
exec node test_node.js
