#!/usr/bin/env bash
# gpu_session.sh — everything the GPU machine runs, so results can be
# reproduced with one command per step (see bench/RESULTS.md).
#
#   bench/gpu_session.sh test    # test-gpu suite, kernel tests, compute-sanitizer
#   bench/gpu_session.sh bench   # kernels, pipeline, matadd, SQL level
#   bench/gpu_session.sh remeasure  # what bench/RESULTS.md marks "re-measure":
#                                # pipeline, SQL fresh-process and warm runs,
#                                # accuracy on the GPU path (every result checked)
#
# Expects ./libgpuagg.so (built with the full GENCODE, here or elsewhere) and,
# on a machine without SQLite's CLI/headers, .device-kit/ (see DEVELOPERS.md).
# Benchmark binaries are built here for sm_90 only, to save compile time.
set -u
out=${OUT:-bench/out}
mkdir -p "$out"
source bench/session_env.sh
B=build/dev
mk() { make -s -j16 BUILD=$B GENCODE=-gencode=arch=compute_90,code=sm_90 "$@"; }

case "${1:-test}" in
test)
  mk gpu-kernels-test test-engine >/dev/null
  $B/tests/gpu_kernels_test | tail -2
  GPUAGG_TEST_GPU=1 tests/run_all.sh >"$out/test_gpu.log" 2>&1
  grep -E '^(FAIL|-- )|passed' "$out/test_gpu.log" | tail -25
  mk test-threads-gpu | tail -2 # 8 threads, own connections, all on the GPU
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer $tool"
    compute-sanitizer --tool $tool --error-exitcode 9 $PYTHON tests/gpu_sanitize.py \
      >"$out/sanitizer_$tool.log" 2>&1
    echo "exit $?"; tail -3 "$out/sanitizer_$tool.log"
  done
  ;;
bench)
  mk bench-kernels bench-pipeline bench-matadd >/dev/null
  $B/bench/kernels --csv "$out/kernels.csv" | tail -22
  $B/bench/pipeline --csv "$out/pipeline.csv"
  $B/bench/matadd --csv "$out/matadd.csv" | tail -14
  $PYTHON bench/sql_bench.py --rows ${SQL_ROWS:-10000,100000,1000000,10000000} \
    --kinds int,real --reps ${SQL_REPS:-5} --gpu-paths --dbdir /tmp/gpuagg_bench \
    --csv "$out/sql_gpu.csv"
  ;;
remeasure)
  # each step checks its results and exits non-zero on a wrong one
  mk bench-pipeline >/dev/null
  rc=0
  $B/bench/pipeline --csv "$out/pipeline.csv" || rc=1
  $PYTHON bench/sql_bench.py --rows ${SQL_ROWS:-10000,1000000,10000000} --kinds int,real \
    --reps ${SQL_REPS:-3} --gpu-paths --dbdir /tmp/gpuagg_bench --csv "$out/sql_gpu.csv" || rc=1
  $PYTHON bench/sql_warm.py --rows 1000000,10000000 --dbdir /tmp/gpuagg_warm \
    --csv "$out/sql_warm_small.csv" || rc=1
  $PYTHON bench/sql_warm.py --rows 100000000 --reps 3 --dbdir /tmp/gpuagg_warm \
    --csv "$out/sql_warm_1e8.csv" || rc=1
  $PYTHON bench/accuracy.py --device gpu --csv "$out/accuracy_gpu.csv" 2>/dev/null || rc=1
  echo "remeasure: exit $rc (CSVs in $out)"
  exit $rc
  ;;
esac
