#!/bin/sh
# asan-run.sh — runs $HARDEN_PYTHON (the suite's python) with the ASan
# runtime preloaded, so that it can load the ASan build of the extension.
# Used by `make test-asan` as the suite's PYTHON (mk/harden.mk).
LD_PRELOAD="${HARDEN_LIBASAN:?}${LD_PRELOAD:+:$LD_PRELOAD}" PYTHONMALLOC=malloc \
  exec "${HARDEN_PYTHON:-/usr/bin/python3}" "$@"
