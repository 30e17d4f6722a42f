#!/usr/bin/env bash
# ci.sh — the cheap hardening checks, for CI (make test-harden-ci):
#   make test-asan   the whole suite + C harnesses under ASan+UBSan (CPU-only)
#   make test-oom    allocation-failure injection (every 3rd allocation)
#   make test-tsan   8 threads under ThreadSanitizer
#   make fuzz        a 60 s libFuzzer campaign (clang + libclang-rt-14-dev are
#                    installed with apt-get when missing and we are root)
# Prints each target's time and ends with "N passed, N failed" (one per target).
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0 skipped=0
t_all=$SECONDS
run() { # name, make args...
  local name=$1 t0=$SECONDS rc
  shift
  echo "== harden-ci: $name"
  make --no-print-directory "$@"
  rc=$?
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "-- harden-ci: $name ok ($((SECONDS - t0))s)"
  else failed=$((failed + 1)); echo "FAIL: harden-ci: $name (status $rc, $((SECONDS - t0))s)"; fi
}
run test-asan test-asan
# every 3rd allocation failed in turn (CI's 15 minutes; `make test-oom`
# alone fails every one)
HARDEN_OOM_STRIDE=${HARDEN_OOM_STRIDE:-3} run test-oom test-oom
run test-tsan test-tsan
if HARDEN_INSTALL=${HARDEN_INSTALL:-${CI:+1}} tests/harden/need-libfuzzer.sh "${FUZZ_CC:-clang}"; then
  run fuzz fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
else
  echo "SKIP: harden-ci: fuzz (no libFuzzer, see above)"
  skipped=$((skipped + 1))
fi
echo "harden-ci: total $((SECONDS - t_all))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
