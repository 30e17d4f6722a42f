#!/usr/bin/env bash
# tests/build/test_build.sh — the build itself (Makefile rules 1-3), in a
# temporary copy of this working tree, so that build/ and ./libgpuagg.so here
# are never touched.  `make test-build` runs it; CI runs it too.
#
#   CPU-only builds (seconds each):
#     fresh_j        make -j CUDA=0 on a fresh copy builds; the last line says
#                    "CUDA=0 was asked"; gpuagg_info() says cuda_compiled false
#     up_to_date     a second make compiles nothing
#     cflags         CFLAGS=-O1 recompiles every object (config stamp)
#     lto_off        LTO= recompiles every object without LTO (no .gnu.lto_
#                    section left), and the .so still works
#     broken_lto     CC="gcc -B<dir with a broken lto-wrapper>", the H200
#                    machine's trouble: after an LTO build and on a fresh
#                    build dir, it builds without LTO and says so
#     clang          CC=clang builds and works
#     nvcc_reason    NVCC= says "nvcc not found"; CUDA=1 NVCC= is an error
#   With nvcc (skipped without it, or with BUILD_TEST_CUDA=0; 1-3 min):
#     cuda_roundtrip make (CUDA) after the CPU build, make CUDA=0, make again:
#                    gpuagg_info().cuda_compiled follows each time, the .so
#                    carries the CUDA runtime exactly when it says so, and the
#                    kernels are not compiled again on the way back
#     cuda_clang     CC=clang with CUDA (nvcc keeps its own host compiler)
#
# Prints FAIL/SKIP lines (PASS with VERBOSE=1) and
#   RESULT build: <p> passed, <f> failed, <s> skipped
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SQLITE3=${SQLITE3:-sqlite3}
p=0 f=0 s=0
# a line per case as it ends (the cases take minutes: CI and people see it
# go on), PASS lines included
ok() { p=$((p + 1)); echo "PASS [build] $1 ($((SECONDS - t_case))s)"; t_case=$SECONDS; return 0; }
bad() { f=$((f + 1)); echo "FAIL [build] $1: $2"; t_case=$SECONDS; }
skip() { s=$((s + 1)); echo "SKIP: [build] $1 ($2)"; t_case=$SECONDS; }
t_case=$SECONDS
finish() { echo "RESULT build: $p passed, $f failed, $s skipped"; [ "$f" -eq 0 ]; exit; }

for t in git make "$SQLITE3"; do
  command -v "$t" >/dev/null 2>&1 || { skip all "no $t"; finish; }
done
tmp=$(mktemp -d /tmp/gpuagg_build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/src
mkdir -p "$d"
# tracked and untracked files, not the ignored ones (build/, node_modules/)
(cd "$ROOT" && git ls-files -z -c -o --exclude-standard | xargs -0 tar -cf - 2>/dev/null) | (cd "$d" && tar -xf -)
[ -f "$d/Makefile" ] || { bad copy "could not copy the working tree to $d"; finish; }

out=""
mk() { out=$(make -C "$d" --no-print-directory "$@" 2>&1); }
last() { printf '%s\n' "$out" | grep '^gpuagg: built' | tail -n 1; }
ncompiled() { printf '%s\n' "$out" | grep -c -- ' -c -o ' || true; }
# what the .so says and what it carries: "<cuda_compiled> <has CUDA runtime> <sum>"
probe() { # LIB path without .so
  local j r
  j=$("$SQLITE3" -batch -cmd ".load $1" :memory: \
    "SELECT json_extract(gpuagg_info(), '\$.cuda_compiled'), gpu_sum(x) FROM (SELECT 1e100 AS x UNION ALL SELECT 1.0 UNION ALL SELECT -1e100)" 2>&1)
  if grep -q -a 'libcuda\.so' "$1.so" 2>/dev/null; then r=1; else r=0; fi
  echo "${j%%|*} $r ${j#*|}"
}
tail_out() { printf '%s' "$out" | tail -n 4 | tr '\n' '|' | tail -c 400; }

# ---- CPU-only ----
# (nsrc: the C objects of a CPU-only build, counted on the fresh build)
if mk -j CUDA=0 && nsrc=$(ncompiled) && [ "$nsrc" -ge 10 ] && [ "$(probe "$d/libgpuagg")" = "0 0 1.0" ]; then
  case $(last) in
    *"WITHOUT CUDA (CUDA=0 was asked)"*) ok fresh_j ;;
    *) bad fresh_j "last line: $(last)" ;;
  esac
else bad fresh_j "$(probe "$d/libgpuagg") / $(tail_out)"; nsrc=0; fi

before=$(stat -c %Y.%s "$d/libgpuagg.so" 2>/dev/null)
if mk CUDA=0 && [ "$(ncompiled)" -eq 0 ] && [ "$(stat -c %Y.%s "$d/libgpuagg.so")" = "$before" ]; then ok up_to_date
else bad up_to_date "a second make CUDA=0 did work: $(tail_out)"; fi

if mk CUDA=0 CFLAGS='-O1 -g' && [ "$(ncompiled)" -eq "$nsrc" ] && [ "$(probe "$d/libgpuagg")" = "0 0 1.0" ]; then ok cflags
else bad cflags "CFLAGS=-O1 recompiled $(ncompiled) of $nsrc objects: $(tail_out)"; fi

lto_objs() { # objects of build/ that hold LTO bytecode
  local o n=0
  for o in $(find "$d/build/ext" "$d/build/engine" "$d/build/planner" -name '*.o'); do
    readelf -S "$o" 2>/dev/null | grep -q '\.gnu\.lto_' && n=$((n + 1))
  done
  echo "$n"
}
if ! command -v readelf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
  skip lto_off "no readelf or gcc"
  skip broken_lto "no readelf or gcc"
else
  mk CUDA=0 CC=gcc
  had=$(lto_objs)
  if mk CUDA=0 CC=gcc LTO= && [ "$(ncompiled)" -eq "$nsrc" ] && [ "$(lto_objs)" -eq 0 ] &&
     [ "$(probe "$d/libgpuagg")" = "0 0 1.0" ]; then
    [ "$had" -gt 0 ] && ok lto_off || skip lto_off "gcc made no LTO objects to begin with"
  else bad lto_off "LTO= left $(lto_objs) LTO objects, compiled $(ncompiled): $(tail_out)"; fi

  # a gcc whose lto-wrapper cannot run (issue 12's recipe)
  mkdir -p "$tmp/B"
  printf '#!/nonexistent\n' >"$tmp/B/lto-wrapper"
  chmod +x "$tmp/B/lto-wrapper"
  broken="gcc -B$tmp/B/"
  mk CUDA=0 CC=gcc # LTO objects first: the case "make LTO= alone does not help"
  r1=$(mk CUDA=0 CC="$broken" && last && probe "$d/libgpuagg")
  r2=$(mk CUDA=0 CC="$broken" BUILD=build-fresh LIB=build-fresh/libgpuagg.so && last && probe "$d/build-fresh/libgpuagg")
  case "$r1|$r2" in
    *"no LTO ($broken cannot link with -flto=auto"*"0 0 1.0|"*"no LTO ($broken cannot link with -flto=auto"*"0 0 1.0")
      ok broken_lto ;;
    *) bad broken_lto "after an LTO build: $(printf '%s' "$r1" | tr '\n' '|'); fresh: $(printf '%s' "$r2" | tr '\n' '|') $(tail_out)" ;;
  esac
fi

if command -v clang >/dev/null 2>&1; then
  if mk CUDA=0 CC=clang && [ "$(ncompiled)" -eq "$nsrc" ] && [ "$(probe "$d/libgpuagg")" = "0 0 1.0" ]; then ok clang
  else bad clang "$(tail_out)"; fi
else skip clang "no clang"; fi

mk NVCC= BUILD=build-nonvcc LIB=build-nonvcc/libgpuagg.so
r1=$(last)
mk CUDA=1 NVCC= BUILD=build-nonvcc LIB=build-nonvcc/libgpuagg.so && r2="built" || r2=$(tail_out)
case "$r1|$r2" in
  *"WITHOUT CUDA (nvcc not found"*"|"*"CUDA=1 was asked but nvcc was not found"*) ok nvcc_reason ;;
  *) bad nvcc_reason "NVCC=: '$r1'; CUDA=1 NVCC=: '$r2'" ;;
esac

# ---- with nvcc ----
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -z "$nvcc" ] || [ "${BUILD_TEST_CUDA:-1}" = 0 ]; then
  why=$([ -z "$nvcc" ] && echo "no nvcc" || echo "BUILD_TEST_CUDA=0")
  skip cuda_roundtrip "$why"
  skip cuda_clang "$why"
  finish
fi
kernels_compiled() { printf '%s\n' "$out" | grep -c -- 'nvcc .* -dc ' || true; }
mk -j && a1=$(probe "$d/libgpuagg") && k1=$(kernels_compiled) || a1="build failed: $(tail_out)"
mk CUDA=0 && a2=$(probe "$d/libgpuagg") || a2="build failed: $(tail_out)"
mk && a3=$(probe "$d/libgpuagg") && k3=$(kernels_compiled) || a3="build failed: $(tail_out)"
if [ "$a1|$a2|$a3" = "1 1 1.0|0 0 1.0|1 1 1.0" ] && [ "${k1:-0}" -gt 0 ] && [ "${k3:-1}" -eq 0 ]; then ok cuda_roundtrip
else bad cuda_roundtrip "make: $a1 (kernels compiled ${k1:-?}); make CUDA=0: $a2; make: $a3 (kernels compiled again: ${k3:-?})"; fi

if command -v clang >/dev/null 2>&1; then
  if mk CC=clang && [ "$(probe "$d/libgpuagg")" = "1 1 1.0" ]; then ok cuda_clang
  else bad cuda_clang "$(probe "$d/libgpuagg") $(tail_out)"; fi
else skip cuda_clang "no clang"; fi
finish
