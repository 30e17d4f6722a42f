"""test_seam.py — the GPU host path on the fake GPU backend (tests/fakegpu/).

Runs only against the fake-GPU build (`make test` sets GPUAGG_FAKE_LIB and
runs this with GPUAGG_LIB pointing at it); anywhere else it prints SKIP.
Each case is a fresh process, since GPU start-up happens once per process:

  states       no driver, an old driver, no device, a too-old device: the GPU
               is not usable, `why` says which, no error counter moves, and
               forced queries answer on the CPU (not as a fallback)
  init_fault   an injected start-up failure is counted under "init"
  kernel_fault a kernel that faults while it runs: counted under "kernel"
               (not "sync"), the chunk is redone on the CPU, same answer
  device_oom   device memory too small for a slot: "dalloc", same answer
  async        slow streams (every queued operation delayed): same answers
  devices      one or two devices, one to four streams: same bits
  restore      the calling thread's current device is the application's
               after every query (tests/fakegpu/test_restore.c)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import LIB, Reporter  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY = ("select printf('%!.17g', gpu_sum(r)), gpu_sum(i), printf('%!.17g', gpu_avg(m)), "
         "quote(gpu_max(m)), quote(gpu_min(r)), printf('%!.17g', gpu_total(m)), "
         "quote(gpu_sum(f)), quote(gpu_sum(g)) from t")

CHILD = r"""
import json, os, sqlite3, sys
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(os.environ["GA_LIB"])
con.executescript('''
create table t(i integer, r real, m, f real, g real);
with recursive s(v) as (select 1 union all select v + 1 from s where v < 50000)
insert into t select v * 7919 % 100003 - 50000,
  (v * 2654435761 % 1000003) * 1e-7 * (case when v % 7 = 0 then -1e12 else 1 end),
  case when v % 3 = 0 then v else v * 0.25 end,
  case when v % 9001 = 0 then 1e308 * 10 else v end,
  case v % 20011 when 0 then 1e308 * 10 when 7 then -1e308 * 10 else v end from s;
''')
for k, v in json.loads(sys.argv[2]):
    con.execute("select gpuagg_config(?, ?)", (k, v))
row = con.execute(sys.argv[1]).fetchone()
print(json.dumps({"row": list(row), "info": json.loads(
    con.execute("select gpuagg_info()").fetchone()[0])}))
"""

FORCED = [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")]


def child(env_extra, config, query=QUERY):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUAGG_FAKE_") and k != "GPUAGG_FAULT"}
    env.update(GA_LIB=LIB, **env_extra)
    p = subprocess.run([sys.executable, "-c", CHILD, query, json.dumps(config)],
                       env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, p.stderr[-600:]
    return json.loads(p.stdout), None


def errors(info):
    return info["counters"]["errors"]


def main():
    rep = Reporter("seam")
    if not os.environ.get("GPUAGG_FAKE_DEVICES"):
        rep.skip("all", "runs against the fake-GPU build only (make test)")
        rep.finish()
    ref, err = child({}, [("device", "cpu")])
    if not rep.check("reference_cpu", ref is not None, err):
        rep.finish()
    clean, err = child({}, FORCED)
    rep.check("clean_gpu", clean is not None and clean["row"] == ref["row"]
              and clean["info"]["last"]["path"] == "gpu"
              and clean["info"]["backend"] == "fake", err or clean)

    # no usable GPU is a state, not an error
    states = [("nodriver", {"GPUAGG_FAKE_STATE": "nodriver"}, "no CUDA driver"),
              ("olddriver", {"GPUAGG_FAKE_STATE": "olddriver"}, "older than runtime"),
              ("nodevice", {"GPUAGG_FAKE_STATE": "nodevice"}, "no CUDA device"),
              ("old_device", {"GPUAGG_FAKE_CC": "7.5"}, "compute capability 8.0")]
    for name, env, why in states:
        got, err = child(env, FORCED)
        ok = got is not None and got["row"] == ref["row"]
        if ok:
            inf = got["info"]
            ok = (inf["gpu_usable"] is False and why in inf["why"]
                  and not any(errors(inf).values())
                  and inf["counters"]["fallbacks"] == 0 and inf["last"]["path"] == "cpu")
        rep.check("state_" + name, ok, err or got and got["info"])

    got, err = child({"GPUAGG_FAULT": "init:1"}, FORCED)
    rep.check("init_fault_counted", got is not None and got["row"] == ref["row"]
              and errors(got["info"])["init"] == 1 and got["info"]["gpu_usable"] is False
              and "injected" in got["info"]["why"], err or got and got["info"])

    for n in (1, 3, 40):
        got, err = child({"GPUAGG_FAKE_KERNEL_FAULT": str(n)}, FORCED)
        ok = got is not None and got["row"] == ref["row"]
        if ok:
            e = errors(got["info"])
            ok = e["kernel"] >= 1 and e["sync"] == 0 and got["info"]["counters"]["fallbacks"] >= 1
        rep.check("kernel_fault_%d" % n, ok, err or (got["row"], ref["row"], got["info"]["counters"]))

    got, err = child({"GPUAGG_FAKE_MEM": "4096"}, FORCED)
    rep.check("device_oom", got is not None and got["row"] == ref["row"]
              and errors(got["info"])["dalloc"] >= 1
              and got["info"]["counters"]["fallbacks"] >= 1, err or got and got["info"]["counters"])

    got, err = child({"GPUAGG_FAKE_DELAY_US": "300"}, FORCED)
    rep.check("async_slow_streams", got is not None and got["row"] == ref["row"]
              and got["info"]["last"]["path"] == "gpu", err or got)

    for devs in ("1", "2"):
        for streams in ("1", "4"):
            got, err = child({"GPUAGG_FAKE_DEVICES": "2"},
                             FORCED + [("devices", devs), ("streams", streams)])
            rep.check("devices%s_streams%s" % (devs, streams),
                      got is not None and got["row"] == ref["row"]
                      and got["info"]["last"]["path"] == "gpu", err or got)

    exe = os.environ.get("GPUAGG_FAKE_RESTORE")
    if exe and os.path.exists(exe):
        p = subprocess.run([exe], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, GPUAGG_FAKE_DEVICES="3"))
        rep.check("restore_device", p.returncode == 0 and "RESTORE OK" in p.stdout,
                  (p.stdout + p.stderr)[-600:])
    else:
        rep.check("restore_device", False, "GPUAGG_FAKE_RESTORE not built: %r" % exe)
    rep.finish()


if __name__ == "__main__":
    main()
