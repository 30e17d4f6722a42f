#!/usr/bin/env bash
# run_all.sh — runs every test suite of gpuagg and sums their results.
#
# Each suite prints FAIL/SKIP lines and one or more summary lines
#   RESULT <suite>: <p> passed, <f> failed, <s> skipped
# This script prints all of that, then one last line
#   N passed, N failed, N skipped
# and exits non-zero when anything failed (or a suite crashed).
#
# Environment: GPUAGG_LIB (extension path without .so, default ./libgpuagg),
# GPUAGG_TEST_GPU=1 (GPU machine: forced runs must use the GPU and GPU-only
# checks run), GPUAGG_FAKE_LIB (the fake-GPU build, mk/fakegpu.mk: without a
# real GPU the GPU suites run against it, so the engine's GPU-path logic is
# tested everywhere), PYTHON, SQLITE3, VERBOSE=1 (print PASS lines), SEED,
# GPUAGG_WHEEL (the wheel that tests/hosts/test_wheel.sh installs; make test
# sets it), SUITES (a subset, in order), SKIP_SUITES (suites to leave out,
# each reported as a SKIP), STOP_ON_FAIL=1 (stop at the first failing suite).
set -u
cd "$(dirname "$0")/.."
export GPUAGG_LIB="${GPUAGG_LIB:-$PWD/libgpuagg}"
if [ -z "${PYTHON:-}" ] || ! command -v "$PYTHON" >/dev/null 2>&1; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
export PYTHON SQLITE3="${SQLITE3:-sqlite3}"

if [ ! -e "$GPUAGG_LIB.so" ]; then
  echo "FAIL: $GPUAGG_LIB.so does not exist (run make first)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

passed=0 failed=0 skipped=0
run_suite() { # name, command...
  local name=$1 out rc t0=$SECONDS
  shift
  echo "== $name"
  out=$("$@" 2>&1)
  rc=$?
  # LeakSanitizer's stop-the-world tracer itself crashes, rarely, at a
  # process's exit ("Tracer caught signal 11", then "LeakSanitizer has
  # encountered a fatal error", and no leak report): a known sanitizer flake
  # (google/sanitizers#1170; CI hit it once in query_errors after all 427
  # checks passed).  The suite runs once more, whole, so a real leak or a
  # real crash still fails it.
  if [ "$rc" -ne 0 ] && [[ $out == *"LeakSanitizer has encountered a fatal error"* ]] &&
    [[ $out != *"ERROR: LeakSanitizer: detected memory leaks"* ]] && [[ $out != *"ERROR: AddressSanitizer"* ]]; then
    echo "note: suite $name: LeakSanitizer's tracer crashed at exit (no leak reported); running it once more"
    out=$("$@" 2>&1)
    rc=$?
  fi
  printf '%s\n' "$out" | grep -v '^PASS ' --line-buffered || true
  [ "${VERBOSE:-0}" = 1 ] && printf '%s\n' "$out" | grep '^PASS ' || true
  local p=0 f=0 s=0 line
  while IFS= read -r line; do
    if [[ $line =~ ^RESULT\ .*:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
      p=$((p + BASH_REMATCH[1])) f=$((f + BASH_REMATCH[2])) s=$((s + BASH_REMATCH[3]))
    fi
  done <<<"$out"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL: suite $name exited with status $rc without reporting a failure"
    f=$((f + 1))
  fi
  echo "-- $name: $p passed, $f failed, $s skipped ($((SECONDS - t0))s)"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# name -> command (eval'd, so tests/sql/*.sql expands), in the default order
declare -A CMD=(
  [sql]='"$PYTHON" tests/sqltest.py tests/sql/*.sql'
  [config]='"$PYTHON" tests/test_config.py'
  [exact]='"$PYTHON" tests/test_exact.py'
  [var]='"$PYTHON" tests/test_var.py'
  [var_kernel]='"$PYTHON" tests/test_var_kernel.py'
  [diff]='"$PYTHON" tests/test_diff.py'
  [chunks]='"$PYTHON" tests/test_chunks.py'
  [gpu]='"$PYTHON" tests/test_gpu.py'
  [gpu_faults]='"$PYTHON" tests/test_gpu_faults.py'
  [matadd]='"$PYTHON" tests/test_matadd.py'
  [aggregate]='"$PYTHON" tests/test_aggregate.py'
  [aggregate_writer]='"$PYTHON" tests/test_aggregate_writer.py'
  [cache]='"$PYTHON" tests/test_cache.py'
  [cache_file]='"$PYTHON" tests/test_cache_file.py'
  [cache_share]='"$PYTHON" tests/test_cache_share.py'
  [cache_keep]='"$PYTHON" tests/test_cache_keep.py'
  [cache_append]='"$PYTHON" tests/test_cache_append.py'
  [cache_share_readers]='env CACHE_SHARE=1 CACHE_DEVICES=cpu CACHE_ONLY="stale blob reattach snapshot replaced watcher walpage reload" "$PYTHON" tests/test_cache.py'
  [trust]='"$PYTHON" tests/test_trust.py'
  [files]='"$PYTHON" tests/test_files.py'
  [first_hour]='"$PYTHON" tests/test_first_hour.py'
  [trust_values]='"$PYTHON" tests/test_trust_values.py'
  [query]='"$PYTHON" tests/test_query.py'
  [query_cache]='env CACHE=1 QUERIES=${QUERY_CACHE_QUERIES:-1000} "$PYTHON" tests/test_query.py'
  [query_errors]='"$PYTHON" tests/test_query_errors.py'
  [query_json]='"$PYTHON" tests/test_query_json.py'
  [query_index]='"$PYTHON" tests/test_query_index.py'
  [query_join]='"$PYTHON" tests/test_query_join.py'
  [query_partial]='env PARTS=1 QUERIES=${QUERY_PARTIAL_QUERIES:-600} "$PYTHON" tests/test_query.py'
  [scan_group]='make -s --no-print-directory test-scan-group'
  [cache_dict]='make -s --no-print-directory test-cache-dict'
  [engine]='make -s --no-print-directory test-engine'
  [cpu_sum]='make -s --no-print-directory test-cpu-sum'
  [state]='"$PYTHON" tests/test_state.py'
  [percentile]='"$PYTHON" tests/test_percentile.py'
  [state_engine]='make -s --no-print-directory test-state-engine'
  [state_worker]='make -s --no-print-directory test-state-worker'
  [python]='"$PYTHON" tests/hosts/test_python.py'
  [analysts]='"$PYTHON" tests/hosts/test_analysts.py'
  [dask]='"$PYTHON" tests/hosts/test_dask.py'
  [cli]='tests/hosts/test_cli.sh'
  [install]='tests/hosts/test_install.sh'
  [wheel]='tests/hosts/test_wheel.sh'
  [node]='tests/hosts/node/run.sh'
  [harden]='"$PYTHON" tests/harden/surface.py'
  [layout]='"$PYTHON" tests/layout/test_layout.py'
  [docs]='"$PYTHON" tests/test_docs.py'
)
DEFAULT_ORDER="sql config exact var var_kernel diff chunks gpu gpu_faults matadd aggregate aggregate_writer cache cache_file cache_share cache_keep cache_share_readers cache_append trust files trust_values query query_cache query_errors query_json query_index query_join query_partial first_hour scan_group cache_dict \
  engine cpu_sum state state_engine state_worker percentile \
  python analysts dask cli install wheel node harden layout docs"

# The GPU-path logic on the fake GPU backend (tests/fakegpu/): two devices,
# one worker thread per stream, partials made like the kernels make them.
# Not on a GPU machine, where the same suites ran on the real GPU above.
if [ "${GPUAGG_TEST_GPU:-0}" != 1 ] && [ -n "${GPUAGG_FAKE_LIB:-}" ]; then
  if [ -e "$GPUAGG_FAKE_LIB.so" ]; then
    fake() { GPUAGG_LIB=$GPUAGG_FAKE_LIB GPUAGG_TEST_GPU=1 GPUAGG_FAKE_DEVICES=2 \
      GPUAGG_GPU_ROWS=200000 GPUAGG_BIG_ROWS=200000 "$@"; }
    CMD[fake:sql]='fake "$PYTHON" tests/sqltest.py tests/sql/*.sql'
    CMD[fake:exact]='fake "$PYTHON" tests/test_exact.py'
    CMD[fake:chunks]='fake "$PYTHON" tests/test_chunks.py'
    CMD[fake:gpu]='fake "$PYTHON" tests/test_gpu.py'
    CMD[fake:gpu_faults]='fake "$PYTHON" tests/test_gpu_faults.py'
    CMD[fake:matadd]='fake "$PYTHON" tests/test_matadd.py'
    CMD[fake:seam]='fake "$PYTHON" tests/test_seam.py'
    CMD[fake:cache]='fake env CACHE_DEVICES=gpu "$PYTHON" tests/test_cache.py'
    CMD[fake:cache_file]='fake env CFILE_ONLY=gpu "$PYTHON" tests/test_cache_file.py'
    CMD[fake:cache_share]='fake env CACHE_DEVICES=gpu "$PYTHON" tests/test_cache_share.py'
    CMD[fake:cache_keep]='fake env CACHE_DEVICES=gpu "$PYTHON" tests/test_cache_keep.py'
    CMD[fake:cache_append]='fake env CACHE_DEVICES=gpu "$PYTHON" tests/test_cache_append.py'
    CMD[fake:query_cache]='fake env CACHE=1 QUERIES=${QUERY_CACHE_QUERIES:-400} "$PYTHON" tests/test_query.py'
    # star joins from the GPU cache (issue 38 section 3.3): only its cases
    CMD[fake:query_join]='fake env JOIN_GPU_ONLY=1 "$PYTHON" tests/test_query_join.py'
    DEFAULT_ORDER="$DEFAULT_ORDER fake:sql fake:exact fake:chunks fake:gpu fake:gpu_faults fake:matadd fake:seam fake:cache fake:cache_file fake:cache_share fake:cache_keep fake:cache_append fake:query_cache fake:query_join"
  else
    echo "FAIL: $GPUAGG_FAKE_LIB.so does not exist (make fake-lib)"
    failed=$((failed + 1))
  fi
fi

# SUITES="engine sql ...": only these, in this order (tests/mutants/run.py
# runs the fast ones first); STOP_ON_FAIL=1: stop after the first suite that
# fails (a mutant is killed then, the rest would only cost time).
for name in ${SUITES:-$DEFAULT_ORDER}; do
  if [[ " ${SKIP_SUITES:-} " == *" $name "* ]]; then
    echo "SKIP: suite $name (left out by SKIP_SUITES)"
    skipped=$((skipped + 1))
    continue
  fi
  if [ -z "${CMD[$name]+x}" ]; then
    echo "FAIL: no suite named $name (suites: $DEFAULT_ORDER)"
    failed=$((failed + 1))
    continue
  fi
  f0=$failed
  eval "run_suite $name ${CMD[$name]}"
  [ "${STOP_ON_FAIL:-0}" = 1 ] && [ "$failed" -gt "$f0" ] && break
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
