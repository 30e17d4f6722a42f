#!/usr/bin/env bash
# ci.sh [PART...] — the cheap hardening checks, for CI (make test-harden-ci):
#   asan   make test-asan: the suite + C harnesses under ASan+UBSan (CPU-only),
#          less the suites of ASAN_SKIP_SUITES (below)
#   oom    make test-oom: allocation-failure injection (every 4th allocation)
#   tsan   make test-tsan: 8 threads under ThreadSanitizer
#   fuzz   make fuzz: a 60 s libFuzzer campaign (clang + libclang-rt-14-dev
#          are installed with apt-get when missing and we are root)
# No PART: all four, in that order (.ci/run runs them in two lanes).
# Prints each part's time and ends with "N passed, N failed" (one per part).
set -u
cd "$(dirname "$0")/../.."
parts=${*:-asan oom tsan fuzz}
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
for part in $parts; do
  case $part in
  asan)
    # CI's 15 minutes: under ASan, leave out the suites that add time but no
    # C path of their own: diff (random differential runs of the reductions
    # that sql and exact reach), and fake:sql and fake:exact (the same files
    # on the fake GPU, whose GPU-path code fake:chunks, fake:gpu, fake:seam
    # and fake:cache reach); dask, as make test-asan leaves it out
    # (mk/harden.mk says why).  `make test-asan` alone runs every other suite.
    run test-asan test-asan ASAN_SKIP_SUITES="${ASAN_SKIP_SUITES-diff fake:sql fake:exact fake:query_cache dask}" ;;
  oom)
    # every 4th allocation failed in turn (CI's 20 minutes: 198 to 246 s
    # at every 3rd, 2026-12-02; `make test-oom` alone fails every one)
    HARDEN_OOM_STRIDE=${HARDEN_OOM_STRIDE:-4} run test-oom test-oom ;;
  tsan) run test-tsan test-tsan ;;
  fuzz)
    if HARDEN_INSTALL=${HARDEN_INSTALL:-${CI:+1}} tests/harden/need-libfuzzer.sh "${FUZZ_CC:-clang}"; then
      run fuzz fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
    else
      echo "SKIP: harden-ci: fuzz (no libFuzzer, see above)"
      skipped=$((skipped + 1))
    fi ;;
  *)
    echo "FAIL: harden-ci: no part named $part (asan oom tsan fuzz)"
    failed=$((failed + 1)) ;;
  esac
done
echo "harden-ci: total $((SECONDS - t_all))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
