"""test_gpu.py — GPU-only checks (GPUAGG_TEST_GPU=1, `make test-gpu`).

Without GPUAGG_TEST_GPU=1 every check prints a visible SKIP line.  With it,
the GPU must be usable, forced queries must run on it (last.path), and every
result must be bit-identical to the CPU path (device=cpu) under several
chunk sizes, stream counts and device counts; a fault injected with
GPUAGG_FAULT must be answered correctly by the fallback.
"""

import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, connect, configure, q1, same, show, GPU  # noqa: E402

N = int(os.environ.get("GPUAGG_GPU_ROWS", "3000000"))
CHECKS = ["gpu_usable", "forced_path_gpu", "forced_rows", "bits_vs_cpu", "auto_threshold",
          "counters_gpu", "windows_vs_cpu", "text_blob_vs_cpu", "fsum_exact", "fault_fallback"]
QUERIES = [
    ("sum_i", "select gpu_sum(i) from g"), ("sum_r", "select gpu_sum(r) from g"),
    ("sum_m", "select gpu_sum(m) from g"), ("total_r", "select gpu_total(r) from g"),
    ("avg_m", "select gpu_avg(m) from g"), ("max_r", "select gpu_max(r) from g"),
    ("min_m", "select gpu_min(m) from g"), ("max_m", "select gpu_max(m) from g"),
    ("sum_nulls", "select gpu_sum(n) from g"), ("group", "select group_concat(s) from "
     "(select printf('%!.17g', gpu_sum(r)) || typeof(gpu_max(m)) s from g group by i % 17 order by 1)"),
]
SETUP = """
create table g(i integer, r real, m, n);
with recursive s(v) as (select 1 union all select v + 1 from s where v < %d)
insert into g select (v * 7919) %% 1000003 - 500000,
  ((v * 2654435761) %% 1000000007) * 1e-9 * (case when v %% 3 = 0 then -1e10 else 1e-3 end),
  case v %% 4 when 0 then v when 1 then v * 0.5 when 2 then -v else 9007199254740993 - v end,
  case when v %% 5 = 0 then null else v end
from s;
"""


def info(con):
    return json.loads(q1(con, "select gpuagg_info()"))


def fault_child():
    con = connect(os.environ["GA_DB"], [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")])
    s = q1(con, "select gpu_sum(r) from g")
    print(json.dumps({"sum": s.hex() if isinstance(s, float) else repr(s), "info": info(con)}))


def main():
    rep = Reporter("gpu")
    if not GPU:
        for c in CHECKS:
            rep.skip(c, "GPU-only; run make test-gpu (GPUAGG_TEST_GPU=1) on a GPU machine")
        rep.finish()
    import tempfile
    tmp = tempfile.mkdtemp(prefix="gpuagg_gpu_")
    db = os.path.join(tmp, "g.db")
    con = connect(db)
    con.executescript(SETUP % N)
    inf0 = info(con)
    rep.check("gpu_usable", inf0.get("gpu_usable") is True and inf0.get("cuda_compiled") is True,
              "gpu_usable=%r why=%r" % (inf0.get("gpu_usable"), inf0.get("why")))
    defaults = [(n, str(q1(con, "select gpuagg_config(?)", (n,))))
                for n in ("cpu_max_rows", "device", "streams", "chunk_bytes", "devices")]
    configure(con, defaults + [("device", "cpu")])
    cpu = {k: q1(con, sql) for k, sql in QUERIES}
    forced = [("device", "gpu"), ("cpu_max_rows", "0")]
    variants = [("chunk64k", [("chunk_bytes", "65536")]), ("chunk1m", [("chunk_bytes", str(1 << 20))]),
                ("chunkdef", []), ("streams1", [("streams", "1")]), ("streams4", [("streams", "4")]),
                ("devices1", [("devices", "1")])]
    bad, paths, rows = [], [], []
    for vname, v in variants:
        configure(con, defaults + forced + v)
        for k, sql in QUERIES:
            got = q1(con, sql)
            if k != "group":
                last = info(con).get("last", {})
                paths.append((vname, k, last.get("path")))
                rows.append((vname, k, last.get("rows")))
            if not same(got, cpu[k]):
                bad.append((vname, k, show(got), show(cpu[k])))
    rep.check("forced_path_gpu", all(p in ("gpu", "mixed") for _, _, p in paths),
              "non-GPU paths: %s" % [p for p in paths if p[2] not in ("gpu", "mixed")][:5])
    rep.check("forced_rows", all(r in (N, N - N // 5) for _, _, r in rows),
              "last.rows: %s" % [r for r in rows if r[2] not in (N, N - N // 5)][:5])
    rep.check("bits_vs_cpu", not bad, "differences: %s" % bad[:5])
    configure(con, defaults + [("device", "auto"), ("cpu_max_rows", "1000")])
    q1(con, "select gpu_sum(r) from g")
    p_hi = info(con).get("last", {}).get("path")
    configure(con, defaults + [("device", "auto"), ("cpu_max_rows", str(10 * N))])
    q1(con, "select gpu_sum(r) from g")
    p_lo = info(con).get("last", {}).get("path")
    rep.check("auto_threshold", p_hi in ("gpu", "mixed") and p_lo == "cpu", "above: %r below: %r" % (p_hi, p_lo))
    c0 = info(con).get("counters", {})
    configure(con, defaults + forced)
    q1(con, "select gpu_sum(i) from g")
    c1 = info(con).get("counters", {})
    grew = [k for k in c1 if "gpu" in k and isinstance(c1[k], int) and c1[k] > c0.get(k, 0)]
    rep.check("counters_gpu", bool(grew), "counters before %r after %r" % (c0, c1))
    # windows and text/blob input on the forced path
    wq = ("select group_concat(v) from (select printf('%!.17g', gpu_sum(r) over w) || ':' || quote(gpu_max(m) over w) v "
          "from (select * from g where rowid <= 20000) window w as (order by rowid rows between 50 preceding and 10 following))")
    tq = ("select hex(gpu_max(t)) || typeof(gpu_max(t)) || hex(gpu_min(t)) || hex(gpu_max(b)) || typeof(gpu_max(b)) "
          "|| hex(gpu_min(b)) || hex(gpu_max(u)) || typeof(gpu_max(u)) || hex(gpu_min(u)) || typeof(gpu_min(u)) from "
          "(select printf('%x', i) t, cast(printf('%d', i) as blob) b, "
          "case i % 4 when 0 then i when 1 then i * 0.5 when 2 then printf('%d', i) else cast(hex(i) as blob) end u from g)")
    configure(con, defaults + [("device", "cpu")])
    wc, tc = q1(con, wq), q1(con, tq)
    configure(con, defaults + forced + [("chunk_bytes", "65536")])
    wg, tg = q1(con, wq), q1(con, tq)
    rep.check("windows_vs_cpu", wc == wg and wc is not None, "cpu %r... gpu %r..." % (str(wc)[:80], str(wg)[:80]))
    rep.check("text_blob_vs_cpu", tc == tg and tc is not None, "cpu %r gpu %r" % (tc, tg))
    rs = [v for (v,) in con.execute("select r from g")]
    fs = math.fsum(rs)
    rep.check("fsum_exact", same(cpu["sum_r"], fs), "sum %s fsum %s" % (show(cpu["sum_r"]), show(fs)))
    con.close()
    # fault injection: the 2nd host-to-device copy fails; the answer must not change
    env = dict(os.environ, GPUAGG_FAULT="h2d:2", GA_DB=db)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--fault-child"], env=env,
                       capture_output=True, text=True)
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
        ok = out["sum"] == cpu["sum_r"].hex() and out["info"].get("counters", {}).get("fallbacks", 1) >= 1
    except Exception as e:  # noqa: BLE001
        ok, out = False, "%s %s %s" % (e, p.stdout[-300:], p.stderr[-300:])
    rep.check("fault_fallback", ok, "child: %r cpu sum %s" % (out, show(cpu["sum_r"])))
    os.remove(db)
    os.rmdir(tmp)
    rep.finish()


if __name__ == "__main__":
    if sys.argv[1:] == ["--fault-child"]:
        fault_child()
    else:
        main()
