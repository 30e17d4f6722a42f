#!/usr/bin/env python3
"""test_var_kernel.py — issue 39: the exact variance kernel (gak_var,
kernels/var.cu) against engine/reduce/xvar.c on the device.

With GPUAGG_TEST_GPU=1 (make test-gpu): builds build/bench/var_kernel
(make bench-var-kernel; GENCODE from the environment, default sm_90) and
runs it with --test: every input's partial, normalised, must equal the
CPU's byte for byte, and the four results their bits (one check a line).
Without a GPU: SKIP (the fake backend's twin is tests/fakegpu/fakegpu.c's
op_var, which adds the values with xvar.c itself).
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import GPU, ROOT, Reporter  # noqa: E402


def main():
    rep = Reporter("var_kernel")
    if not GPU:
        rep.skip("gak_var", "GPU-only (GPUAGG_TEST_GPU=1)")
        rep.finish()
    gencode = os.environ.get("GENCODE", "-gencode=arch=compute_90,code=sm_90")
    b = subprocess.run(["make", "-s", "--no-print-directory", "LTO=", "GENCODE=" + gencode,
                        "bench-var-kernel"], cwd=ROOT, capture_output=True, text=True)
    if b.returncode != 0 or "SKIP" in b.stdout:
        rep.check("build", False, (b.stdout + b.stderr)[-2000:])
        rep.finish()
    p = subprocess.run([os.path.join(ROOT, "build", "bench", "var_kernel"), "--test"],
                       capture_output=True, text=True)
    lines = [l for l in p.stdout.split("\n") if l.startswith(("PASS ", "FAIL "))]
    for l in lines:
        rep.check(l[5:], l.startswith("PASS "), l)
    rep.check("ran", p.returncode in (0, 1) and len(lines) >= 40,
              "exit %d, %d lines: %s" % (p.returncode, len(lines), (p.stdout + p.stderr)[-1000:]))
    rep.finish()


if __name__ == "__main__":
    main()
