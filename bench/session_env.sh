# bench/session_env.sh — sourced by the GPU-machine scripts (gpu_session.sh,
# cache_session.sh, aggregate_session.sh): the device kit's sqlite3 CLI and
# headers where the machine has none (DEVELOPERS.md: .device-kit/), the
# tools the suites use, and a line that says where the run happened.
if [ -f .device-kit/env.sh ]; then
  source .device-kit/env.sh
  export SQLITE_LIBS="-L$PWD/.device-kit/lib -l:libsqlite3.so.0"
fi
export PYTHON=${PYTHON:-python3} SQLITE3=${SQLITE3:-sqlite3} PYTHONUNBUFFERED=1
echo "# $(nproc) CPUs, $(uname -n), $(date -u)"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
