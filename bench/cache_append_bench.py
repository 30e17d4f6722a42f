#!/usr/bin/python3
"""Appends that extend a cache entry (issue 40, part 4): the next Q1 after
appending 1% of the rows, extended, against a full reload + Q1.

  bench/cache_append_bench.py [--rows 6e6] [--src FILE] [--db FILE]
                              [--reps 5] [--device cpu] [--csv FILE]

The database is a copy of bench/lineitem.py's table (--src, made when
absent) in WAL mode, with wal_autocheckpoint raised so that the frames since
the entry's state stay in the WAL (a checkpoint that completes, then the next
write, restart the WAL: the proof then has nothing to read and the entry
reloads; docs/gpu_cache.md "Appends").  One process, one connection, host
entry of Q1's 7 columns; rep by rep, interleaved:
  extend   INSERT 1% of the rows again (new rowids past the largest), then
           TPC-H Q1 through gpu_query: the query extends the entry with the
           new rows and answers (last_scan.why must say "extended by")
  reload   INSERT 1% again, then gpu_cache_drop + gpu_cache (a load from
           rows, with the page record a WAL load now takes) + Q1
  warm     Q1 again (the entry current)
CPU time of the process (getrusage: every thread's) and wall time, ms;
medians of --reps.  Goal (issue 40): extend <= 5% of reload.

--device gpu: the entry is a GPU entry (the run stops when it is not), and
each "extend" is one of a GPU entry's two kinds (docs/gpu_cache.md "GPU
entries: in place or re-copied"): each rep appends twice before its
reload, the first append finding no room (a load leaves none) and
re-copying the device columns into room for a quarter more rows, the
second (1%) going in place; the CSV's "how" column and the medians per
kind say which.  On the fake GPU backend (GPUAGG_LIB=
build/fake/libgpuagg GPUAGG_TEST_GPU=1) it only checks that the path runs:
no figure from it is a GPU figure.  On a GPU, well under 3 minutes:
  python3 bench/cache_append_bench.py --device gpu --rows 6e6 --reps 5 \
      --csv bench/results/cache_append_gpu_<machine>_<date>.csv
With
GPUAGG_LIB naming the build before part 4 (--label base --append-csv), the
"extend" rows are that build's next Q1 after an append (the entry stale:
the uncached parallel scan) and "reload" its reload without the page
record.
"""

import argparse
import csv
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")
COLS = "l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax, l_shipdate"
Q1 = ("SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
      "sum(l_extendedprice) AS sum_base_price, "
      "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
      "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
      "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, "
      "avg(l_discount) AS avg_disc, count(*) AS count_order "
      "FROM lineitem WHERE l_shipdate <= '1998-09-02' "
      "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus")


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e3


def timed(fn):
    c0, w0 = cpu(), time.perf_counter()
    out = fn()
    return cpu() - c0, (time.perf_counter() - w0) * 1e3, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=6e6)
    ap.add_argument("--src")
    ap.add_argument("--db", default="/tmp/gpuagg_append_bench/lineitem.db")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--csv")
    ap.add_argument("--label", default="this", help="the build's name in the CSV")
    ap.add_argument("--append-csv", action="store_true", help="add rows to --csv")
    a = ap.parse_args()
    rows = int(a.rows)
    src = a.src or "/tmp/gpuagg_append_bench/lineitem_%d.db" % rows
    os.makedirs(os.path.dirname(os.path.abspath(a.db)), exist_ok=True)
    if not os.path.exists(src):
        subprocess.run([sys.executable, os.path.join(HERE, "lineitem.py"), "--rows",
                        str(rows), "--db", src], check=True)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(a.db + suffix):
            os.remove(a.db + suffix)
    shutil.copyfile(src, a.db)
    con = sqlite3.connect(a.db, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("PRAGMA journal_mode = WAL").fetchall()
    con.execute("PRAGMA wal_autocheckpoint = 1000000").fetchall()
    con.execute("SELECT gpuagg_config('device', ?)", (a.device,)).fetchall()
    con.execute("PRAGMA user_version = 1")  # a committed frame: a provable state
    con.execute("CREATE VIRTUAL TABLE temp.q1 USING gpu_query(%s)"
                % ("'" + Q1.replace("'", "''") + "'"))
    con.execute("SELECT gpu_cache('lineitem', ?)", (COLS,)).fetchall()
    where = json.loads(con.execute("SELECT gpuagg_info()").fetchall()[0][0])[
        "cache"]["entries"][0]["where"]
    if a.device == "gpu" and where != "gpu":
        sys.exit("cache_append_bench: --device gpu, but the entry is in %s memory "
                 "(gpuagg_info: no usable GPU?)" % where)
    step = [0]
    one = max(1, rows // 100)

    def q1():
        step[0] += 1  # a new text: prepared now, it sees the connection idle
        got = con.execute("SELECT * FROM q1 -- %d" % step[0]).fetchall()
        ls = json.loads(con.execute("SELECT gpuagg_info()").fetchall()[0][0])["last_scan"]
        return got, ls

    def append():
        con.execute("INSERT INTO lineitem SELECT * FROM lineitem WHERE rowid BETWEEN 1 AND ?",
                    (one,))

    def reload():
        con.execute("SELECT gpu_cache_drop('lineitem')").fetchall()
        con.execute("SELECT gpu_cache('lineitem', ?)", (COLS,)).fetchall()
        return q1()

    out, how = [], []  # how: a GPU entry's extension, in place or re-copied
    q1()
    for rep in range(a.reps):
        # a GPU entry: the first append after a load re-copies, the next
        # goes in place (both measured, each rep)
        for _ in range(2 if a.device == "gpu" else 1):
            append()
            c, w, (got, ls) = timed(q1)
            ok = "extended by %d" % one in (ls.get("why") or "")
            out.append(("extend", rep, c, w, ok, ls.get("why")))
            how.append("in place" if "device columns in place" in (ls.get("why") or "")
                       else "re-copied" if "device columns re-copied" in (ls.get("why") or "")
                       else "")
        append()
        c, w, (got2, ls2) = timed(reload)
        out.append(("reload", rep, c, w, ls2.get("path") == "cache", ls2.get("why")))
        how.append("")
        c, w, (got3, ls3) = timed(q1)
        out.append(("warm", rep, c, w, ls3.get("path") == "cache", ls3.get("why")))
        how.append("")
        print("rep %d: extend %.1f ms cpu %.1f ms wall (%s%s), reload %.1f ms cpu %.1f ms wall, "
              "warm %.1f ms cpu %.1f ms wall"
              % (rep, out[-3][2], out[-3][3], "ok" if ok else ls.get("why"),
                 ", " + how[-3] if how[-3] else "", out[-2][2], out[-2][3], out[-1][2],
                 out[-1][3]))
        sys.stdout.flush()
    med = {m: (statistics.median(r[2] for r in out if r[0] == m),
               statistics.median(r[3] for r in out if r[0] == m)) for m in ("extend", "reload", "warm")}
    for m, (c, w) in med.items():
        print("%-7s cpu %8.1f ms  wall %8.1f ms (medians of %d)" % (m, c, w, a.reps))
    print("extend / reload (cpu): %.2f%%   goal <= 5%%" % (100 * med["extend"][0] / med["reload"][0]))
    for h in ("in place", "re-copied"):  # a GPU entry's two kinds
        ws = [r[3] for r, k in zip(out, how) if r[0] == "extend" and k == h]
        if ws:
            print("extend, device columns %-9s wall %8.1f ms (median of %d); / reload wall %.2f%%"
                  % (h, statistics.median(ws), len(ws),
                     100 * statistics.median(ws) / med["reload"][1]))
    if a.csv:
        with open(a.csv, "a" if a.append_csv else "w", newline="") as f:
            wr = csv.writer(f)
            if not a.append_csv:
                wr.writerow(["build", "mode", "rep", "cpu_ms", "wall_ms", "ok", "rows", "appended",
                             "device", "how"])
            for (m, rep, c, w, ok, why), h in zip(out, how):
                wr.writerow([a.label, m, rep, "%.2f" % c, "%.2f" % w, int(bool(ok)), rows, one,
                             a.device, h])
    con.close()


if __name__ == "__main__":
    main()
