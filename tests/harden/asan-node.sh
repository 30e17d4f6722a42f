#!/bin/sh
# asan-node.sh — node with the ASan runtime preloaded, so that the host test
# can load the ASan build of the extension (make test-asan puts it first in
# PATH as build/asan/bin/node).  Leak checking is off here: V8 keeps memory
# at exit; python and the C harnesses check gpuagg for leaks.
LD_PRELOAD="${HARDEN_LIBASAN:?}${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  exec "${HARDEN_NODE:?}" "$@"
