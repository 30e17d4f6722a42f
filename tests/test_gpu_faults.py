"""test_gpu_faults.py — a GPU failure at every stage gives the CPU's answer.

For each pipeline stage (CUDA start, pinned allocation, device allocation,
H2D copy, launch, kernel, D2H copy, sync) and several positions (the 1st, 2nd
and 5th call of that stage), a fresh process runs every aggregate forced onto
the GPU with small chunks under GPUAGG_FAULT=stage:n.  Its answers must be
bit-identical to the CPU path's, the failure must be counted under its stage
in gpuagg_info() (a fault that was asked for but never injected FAILS: it
would prove nothing), and past start-up a fallback must be counted too.

GPU-only (GPUAGG_TEST_GPU=1); elsewhere every check prints SKIP.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import GPU, LIB, Reporter  # noqa: E402

STAGES = ["init", "pinned", "dalloc", "h2d", "launch", "kernel", "d2h", "sync"]
POSITIONS = [1, 2, 5]
QUERY = ("select printf('%!.17g', gpu_sum(r)), gpu_sum(i), "
         "printf('%!.17g', gpu_avg(m)), quote(gpu_max(m)), quote(gpu_min(r)), "
         "printf('%!.17g', gpu_total(m)) from t")

CHILD = r"""
import json, os, sqlite3, sys
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(os.environ["GA_LIB"])
con.executescript('''
create table t(i integer, r real, m);
with recursive s(v) as (select 1 union all select v + 1 from s where v < 60000)
insert into t select v * 7919 % 100003 - 50000,
  (v * 2654435761 % 1000003) * 1e-7 * (case when v % 7 = 0 then -1e12 else 1 end),
  case when v % 3 = 0 then v else v * 0.25 end from s;
''')
dev = sys.argv[1]
for k, v in (("device", dev), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")):
    con.execute("select gpuagg_config(?, ?)", (k, v))
row = con.execute(sys.argv[2]).fetchone()
print(json.dumps({"row": list(row), "info": json.loads(
    con.execute("select gpuagg_info()").fetchone()[0])}))
"""


def child(device, fault=None):
    env = dict(os.environ, GA_LIB=LIB)
    env.pop("GPUAGG_FAULT", None)
    if fault:
        env["GPUAGG_FAULT"] = fault
    p = subprocess.run([sys.executable, "-c", CHILD, device, QUERY], env=env,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, p.stderr[-400:]
    return json.loads(p.stdout), None


def main():
    rep = Reporter("gpu_faults")
    if not GPU:
        for s in STAGES:
            rep.skip("fault_" + s, "GPU-only; run make test-gpu on a GPU machine")
        rep.finish()
    ref, err = child("cpu")
    rep.check("reference_cpu", ref is not None, err)
    clean, err = child("gpu")
    rep.check("clean_gpu_run_used_gpu",
              clean is not None and clean["info"]["counters"]["chunks_gpu"] > 0
              and clean["row"] == ref["row"], err or clean)
    for stage in STAGES:
        for n in POSITIONS:
            got, err = child("gpu", "%s:%d" % (stage, n))
            if got is None:
                rep.check("fault_%s_%d" % (stage, n), False, err)
                continue
            k = got["info"]["counters"]
            same = got["row"] == ref["row"]
            # The fault asked for must have been injected: counted under its
            # stage.  A fault never reached proves nothing, so it fails (pick
            # positions the query reaches).  Past start-up it must also have
            # sent work back to the CPU (a fallback).
            hit = k["errors"][stage] > 0
            fell_back = stage == "init" or k["fallbacks"] > 0
            rep.check("fault_%s_%d" % (stage, n), same and hit and fell_back,
                      "row %r vs cpu %r (injected failure %s, %s), counters %r, last %r" % (
                          got["row"], ref["row"], "counted" if hit else "NOT counted",
                          "fallback counted" if fell_back else "NO fallback counted",
                          k, got["info"]["last"]))
    rep.finish()


if __name__ == "__main__":
    main()
