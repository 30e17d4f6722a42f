#!/usr/bin/python3
"""gpu_query over an indexed range (issue 37, part 5): one week, one month
and one year of an indexed TEXT date, through SQLite's own text and through
gpu_query, on the same connection, in the same run.

  bench/index_bench.py [--rows 2e6] [--reps 5] [--db DIR] [--csv FILE]
                       [--threads 2] [--orders ordered,shuffled]
                       [--ranges week,month,year] [--machine NAME]
                       [--modes sqlite,gpu_query,off,band,serial]

The table: sales(order_date TEXT, customer_id INTEGER, product_id INTEGER,
region TEXT, qty INTEGER, price REAL), five years of dates (2019-01-01 ..
2023-12-31), with an index on order_date, in two files: "ordered" (rows
inserted in date order, so dates correlate with rowids, as in a table that
grows day by day) and "shuffled" (each row's date a hash of its number).
Files DIR/index_<order>_<rows>.db, made once and kept; the page cache is
warm before timing (a full count and an index count first).

The query, for each range [lo, hi] of dates:
  SELECT region, count(*), sum(qty), total(qty * price) FROM sales
  WHERE order_date BETWEEN ?1 AND ?2 GROUP BY region ORDER BY region
Modes: sqlite (that text, SQLite's own plan: through the index), gpu_query
(`CREATE VIRTUAL TABLE temp.q USING gpu_query('<the text>')`, then SELECT *
FROM q(lo, hi), gpuagg_config threads = --threads).  Every rep runs both,
the first rotating; medians, and the ratio sqlite / gpu_query (above 1:
gpu_query is faster).  Modes off, band and serial (--modes) run gpu_query
with GPUAGG_QINDEX set so (planner/qindex.c rule 7): the whole table as
before issue 37, the range's rowid band wherever one is known, SQLite's own
plan wherever the serial path can run it: each choice measured on the same
table.  gpu_query's rows must equal the reference (SQLite's
text with gpu_sum and gpu_total: exit status 1 otherwise), and its
last_scan path and why are printed.

CSV (one line per measurement): machine, rows, order, range, mode, threads,
rep, ms, path, why.  Default: bench/results/index_<machine>_<date>.csv.
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_db  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("GPUAGG_LIB", os.path.join(ROOT, "libgpuagg"))
DAYS = 1826  # 2019-01-01 .. 2023-12-31
RANGES = {
    "week": ("2022-03-07", "2022-03-13"),
    "month": ("2022-03-01", "2022-03-31"),
    "year": ("2022-01-01", "2022-12-31"),
}
SQL = ("SELECT region, count(*), sum(qty), total(qty * price) FROM sales "
       "WHERE order_date BETWEEN ?1 AND ?2 GROUP BY region ORDER BY region")
REF = SQL.replace("sum(", "gpu_sum(").replace("total(", "gpu_total(")


def make(path, n, order):
    con = bench_db.connect(path, LIB)
    # day of row i: in order (i * DAYS / n), or a hash of i
    day = ("((i - 1) * %d / %d)" % (DAYS, n) if order == "ordered"
           else "(((i * 2654435761) %% 4294967296) %% %d)" % DAYS)
    bench_db.make_table(
        con, "sales",
        "order_date TEXT, customer_id INTEGER, product_id INTEGER, "
        "region TEXT, qty INTEGER, price REAL", n,
        "date('2019-01-01', '+' || %s || ' days'), (i * 7919) %% 100000, "
        "(i * 104729) %% 5000, "
        "CASE i %% 5 WHEN 0 THEN 'north' WHEN 1 THEN 'south' WHEN 2 THEN "
        "'east' WHEN 3 THEN 'west' ELSE 'center' END, 1 + i %% 9, "
        "(i %% 1000) / 10.0 + 0.99" % day, label="%s %d" % (order, n))
    con.execute("CREATE INDEX IF NOT EXISTS sales_date ON sales(order_date)")
    return con


def timed(con, sql, args):
    t0 = time.perf_counter()
    rows = con.execute(sql, args).fetchall()
    return (time.perf_counter() - t0) * 1e3, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=2e6)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--db", default="/tmp")
    ap.add_argument("--csv")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--orders", default="ordered,shuffled")
    ap.add_argument("--ranges", default="week,month,year")
    ap.add_argument("--machine", default=socket.gethostname())
    ap.add_argument("--modes", default="sqlite,gpu_query")
    a = ap.parse_args()
    n = int(a.rows)
    csv = a.csv or os.path.join(ROOT, "bench", "results", "index_%s_%s.csv" % (
        a.machine, datetime.date.today().isoformat()))
    os.makedirs(os.path.dirname(csv), exist_ok=True)
    new = not os.path.exists(csv)
    out = open(csv, "a")
    if new:
        out.write("machine,rows,order,range,mode,threads,rep,ms,path,why\n")
    bad = 0
    for order in a.orders.split(","):
        path = os.path.join(a.db, "index_%s_%d.db" % (order, n))
        con = make(path, n, order)
        con.execute("SELECT gpuagg_config('threads', ?)", (a.threads,))
        con.execute("SELECT count(*), sum(qty) FROM sales NOT INDEXED").fetchall()
        con.execute("SELECT count(*) FROM sales INDEXED BY sales_date "
                    "WHERE order_date > ''").fetchall()
        con.execute("DROP TABLE IF EXISTS temp.q")
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')"
                    % SQL.replace("'", "''"))
        for rname in a.ranges.split(","):
            args = RANGES[rname]
            ref = con.execute(REF, args).fetchall()
            modes = a.modes.split(",")
            ms = dict((m, []) for m in modes)
            last = {}
            for rep in range(a.reps):
                for m in modes[rep % len(modes):] + modes[:rep % len(modes)]:
                    if m == "sqlite":
                        t, rows = timed(con, SQL, args)
                        p = w = ""
                    else:
                        if m != "gpu_query":
                            os.environ["GPUAGG_QINDEX"] = m
                        t, rows = timed(con, "SELECT * FROM q(?, ?)", args)
                        os.environ.pop("GPUAGG_QINDEX", None)
                        ls = json.loads(con.execute(
                            "SELECT gpuagg_info()").fetchone()[0])["last_scan"]
                        p, w = ls.get("path", ""), ls.get("why", "")
                        if m == "gpu_query":
                            last = ls
                        if rows != ref:
                            bad += 1
                            print("MISMATCH %s %s %s" % (order, rname, m), flush=True)
                    ms[m].append(t)
                    out.write("%s,%d,%s,%s,%s,%d,%d,%.2f,%s,\"%s\"\n" % (
                        a.machine, n, order, rname, m,
                        1 if m == "sqlite" else a.threads, rep, t, p,
                        w.replace('"', "'")))
            s = statistics.median(ms["sqlite"])
            print("%-9s %-6s sqlite %8.1f ms  %s  %s: %s" % (
                order, rname, s, "  ".join(
                    "%s %8.1f ms x%.2f" % (m, statistics.median(ms[m]),
                                           s / statistics.median(ms[m]))
                    for m in modes if m != "sqlite"),
                last.get("path"), last.get("why")), flush=True)
        con.close()
    out.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
