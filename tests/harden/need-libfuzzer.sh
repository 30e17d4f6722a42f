#!/bin/sh
# need-libfuzzer.sh CC — check that CC can build a libFuzzer target; say how
# to get it when not (Debian: clang-14 + libclang-rt-14-dev).  With
# HARDEN_INSTALL=1 (CI, as root) it installs them with apt-get.
cc=${1:-clang}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
probe() {
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$t/f.c"
  "$cc" -fsanitize=fuzzer,address -o "$t/f" "$t/f.c" >/dev/null 2>&1
}
probe && exit 0
if [ "${HARDEN_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "fuzz: libFuzzer not usable with $cc; installing clang and libclang-rt-14-dev"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
  probe && exit 0
fi
echo "fuzz: $cc cannot build a libFuzzer target (-fsanitize=fuzzer)."
echo "fuzz: install clang with its runtime: apt-get install -y clang libclang-rt-14-dev"
exit 1
