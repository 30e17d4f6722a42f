#!/usr/bin/python3
"""The analyst's dashboard set (issue 37): the SQL shapes analysts write every
day -- date buckets, count(DISTINCT), a share of total, an IN-list subquery
over a dimension, indexed date ranges -- through SQLite's own text, through
gpu_query (the parallel scan), from gpu_cache (host or GPU) and through
DuckDB's native table, on the same rows, in the same run.

  bench/dashboard_bench.py [--set sales|lineitem] [--rows 2e7] [--reps 5]
        [--sqlite-reps N] [--threads 0] [--modes sqlite,gpu_query,cache,duckdb]
        [--queries month,distinct,...] [--cache-device auto|cpu]
        [--duckdb-threads 2] [--machine NAME] [--csv FILE] [--db DIR]

Sets:
  sales     a sales-shaped table, made once in DIR/sales_<rows>.db:
            sales(id INTEGER PRIMARY KEY, order_date TEXT (ISO, in date order
            over 2020-01-01 .. 2024-12-31, indexed), customer_id INTEGER
            (200,000 customers), region TEXT (8), product_id INTEGER (5,000),
            qty INTEGER, amount REAL) and products(id, category TEXT (10),
            price REAL).  Every column is an integer hash of the row number,
            the same in SQLite and in DuckDB.
  lineitem  bench/lineitem.py's table (query_bench.py's), for the GPU goals:
            count(DISTINCT l_suppkey) by l_returnflag and the monthly trend.

Modes: sqlite (the text on a plain connection with the extension loaded),
gpu_query (CREATE VIRTUAL TABLE temp.q USING gpu_query('<text>'), then
SELECT * FROM q; threads = --threads, 0 = every core), cache (the same, with
gpu_cache's entry of the columns the set reads loaded before the reps, on
--cache-device), duckdb (bench/duckdb_query.mjs, its own table of the same
rows).  A text that gpu_query refuses is reported ("refused: ...") and
skipped in that mode; gpuagg_info()'s last_scan.path and .why after each
call go into the CSV, so a serial or declined run is visible.

Every rep runs every mode once, the first mode rotating with the rep; the
summary is medians and ratios against SQLite's median of the same run
(x = sqlite / mode: above 1 is faster).  gpu_query's and the cache's rows
must equal, value and type, those of SQLite's text with sum/total/avg/min/max
replaced by the gpu_ aggregates (run once, untimed; exit status 1 on a
difference).  DuckDB's rows are compared loosely and reported.

CSV (one line per measurement): machine, set, rows, query, mode, threads,
rep, ms, path, why.  Default: bench/results/dashboard_<machine>_<date>.csv.
"""
import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import time

import bench_db
import lineitem
from query_bench import DuckDB

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")

REGIONS = ["North", "South", "East", "West", "Central", "Coast", "Mountain", "Islands"]
CATEGORIES = ["toys", "garden", "books", "music", "food", "tools", "games", "sport",
              "home", "office"]
DAYS = 1827            # 2020-01-01 .. 2024-12-31
CUSTOMERS, PRODUCTS = 200000, 5000


def _case(expr, values):
    return "CASE %s %s END" % (expr, " ".join("WHEN %d THEN '%s'" % (k, v)
                                             for k, v in enumerate(values)))


def sales_select(n, dialect, source):
    """The n sales rows over `source` (a FROM item with a column i)."""
    if dialect == "sqlite":
        day = "date('2020-01-01', '+' || ((i - 1) * %d / %d) || ' days')" % (DAYS, n)
    else:
        day = ("CAST(DATE '2020-01-01' + CAST((i - 1) * %d // %d AS INTEGER) AS VARCHAR)"
               % (DAYS, n))
    cols = [
        ("id", "i"),
        ("order_date", day),
        ("customer_id", "1 + (i * 2654435761) %% 1000003 %% %d" % CUSTOMERS),
        ("region", _case("(i * 7919) %% 1009 %% %d" % len(REGIONS), REGIONS)),
        ("product_id", "1 + (i * 40503) %% 65537 %% %d" % PRODUCTS),
        ("qty", "1 + (i * 31) % 10"),
        ("amount", "1 + ((i * 2246822519) % 100003) / 100.0"),
    ]
    return "SELECT %s FROM %s" % (", ".join("%s AS %s" % (e, c) for c, e in cols), source)


def products_select(dialect, source):
    return ("SELECT i AS id, %s AS category, 1 + (i * 97) %% 1000 / 10.0 AS price FROM %s"
            % (_case("i %% %d" % len(CATEGORIES), CATEGORIES), source))


SALES_COLUMNS = ("id INTEGER PRIMARY KEY, order_date TEXT, customer_id INTEGER, region TEXT, "
                 "product_id INTEGER, qty INTEGER, amount REAL")


def make_sales(path, n):
    if os.path.exists(path):
        print("# reusing %s" % path, flush=True)
        return
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    t0 = time.time()
    con = sqlite3.connect(tmp, isolation_level=None)
    con.execute("PRAGMA journal_mode = off")
    con.execute("CREATE TABLE sales(%s)" % SALES_COLUMNS)
    con.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, category TEXT, price REAL)")
    con.execute("BEGIN")
    gen = "(WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d) " \
          "SELECT i FROM g)"
    con.execute("INSERT INTO sales %s" % sales_select(n, "sqlite", gen % n))
    con.execute("INSERT INTO products %s" % products_select("sqlite", gen % PRODUCTS))
    con.execute("COMMIT")
    con.execute("CREATE INDEX sales_date ON sales(order_date)")
    con.close()
    os.replace(tmp, path)
    print("# made %s: %d rows in %.1f s" % (path, n, time.time() - t0), flush=True)


def duck_build(n):
    return ["CREATE TABLE sales AS %s" % sales_select(n, "duckdb", "range(1, %d + 1) t(i)" % n),
            "CREATE TABLE products AS %s" % products_select(
                "duckdb", "range(1, %d + 1) t(i)" % PRODUCTS)]


# name -> (SQLite's text, DuckDB's text or None = the same)
SALES = {
    "month": ("SELECT strftime('%Y-%m', order_date) AS month, sum(amount) AS revenue, "
              "count(*) AS orders FROM sales GROUP BY month ORDER BY month",
              "SELECT strftime(CAST(order_date AS DATE), '%Y-%m') AS month, sum(amount) AS "
              "revenue, count(*) AS orders FROM sales GROUP BY month ORDER BY month"),
    "uniq": ("SELECT region, count(DISTINCT customer_id) AS customers FROM sales "
                 "GROUP BY region ORDER BY region", None),
    "share": ("SELECT region, sum(amount) / (SELECT sum(amount) FROM sales) AS share "
              "FROM sales GROUP BY region ORDER BY region", None),
    "in_sub": ("SELECT region, sum(amount) AS revenue, count(*) AS orders FROM sales "
               "WHERE product_id IN (SELECT id FROM products WHERE category = 'toys') "
               "GROUP BY region ORDER BY region", None),
    "week": ("SELECT region, sum(amount) AS revenue, count(*) AS orders FROM sales "
             "WHERE order_date BETWEEN '2023-03-06' AND '2023-03-12' "
             "GROUP BY region ORDER BY region", None),
    "month_range": ("SELECT region, sum(amount) AS revenue, count(*) AS orders FROM sales "
                    "WHERE order_date BETWEEN '2023-03-01' AND '2023-03-31' "
                    "GROUP BY region ORDER BY region", None),
    "year_range": ("SELECT region, sum(amount) AS revenue, count(*) AS orders FROM sales "
                   "WHERE order_date BETWEEN '2023-01-01' AND '2023-12-31' "
                   "GROUP BY region ORDER BY region", None),
}
SALES_CACHE = "order_date, customer_id, region, product_id, amount"

LINEITEM = {
    "l_distinct": ("SELECT l_returnflag, count(DISTINCT l_suppkey) AS suppliers FROM lineitem "
                   "GROUP BY l_returnflag ORDER BY l_returnflag", None),
    "l_month": ("SELECT strftime('%Y-%m', l_shipdate) AS month, "
                "sum(l_extendedprice * (1 - l_discount)) AS revenue, count(*) AS lines "
                "FROM lineitem GROUP BY month ORDER BY month",
                "SELECT strftime(CAST(l_shipdate AS DATE), '%Y-%m') AS month, "
                "sum(l_extendedprice * (1 - l_discount)) AS revenue, count(*) AS lines "
                "FROM lineitem GROUP BY month ORDER BY month"),
}
LINEITEM_CACHE = "l_returnflag, l_suppkey, l_shipdate, l_extendedprice, l_discount"

MODES = ["sqlite", "gpu_query", "cache", "duckdb"]


def gpu_text(sql):
    return re.sub(r"\b(sum|total|avg|min|max)\s*\(", lambda m: "gpu_%s(" % m.group(1), sql,
                  flags=re.I)


def typed(rows):
    return [tuple((type(v).__name__, v) for v in r) for r in rows]


def close_rows(ref, got, rel=1e-9):
    if len(ref) != len(got):
        return False
    for a, b in zip(ref, got):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if isinstance(x, float) or isinstance(y, float):
                try:
                    if abs(float(x) - float(y)) > rel * max(1.0, abs(float(x))):
                        return False
                except (TypeError, ValueError):
                    return False
            elif str(x) != str(y):
                return False
    return True


def scan_info(con):
    s = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}
    return s.get("path", ""), (s.get("why") or "").replace(",", ";")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="sales", choices=["sales", "lineitem"])
    ap.add_argument("--rows", default=None, help="default 2e7 (sales), 6e6 (lineitem)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sqlite-reps", type=int, default=None,
                    help="SQLite's own text in the first N reps only (default: every rep); "
                         "at 6e7 rows it takes a minute a query")
    ap.add_argument("--db", default="/tmp/gpuagg_dashboard_bench")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--queries", default=None)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--cache-device", default="auto")
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    args = ap.parse_args()
    sales = args.set == "sales"
    n = int(float(args.rows or ("2e7" if sales else "6e6")))
    table = SALES if sales else LINEITEM
    queries = (args.queries or ",".join(table)).split(",")
    modes = args.modes.split(",")
    for q in queries:
        if q not in table:
            ap.error("unknown query %r (%s)" % (q, ",".join(table)))
    for m in modes:
        if m not in MODES:
            ap.error("unknown mode %r (%s)" % (m, ",".join(MODES)))
    csv_path = args.csv or os.path.join(HERE, "results", "dashboard_%s_%s.csv"
                                        % (args.machine, time.strftime("%Y-%m-%d")))
    os.makedirs(args.db, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    if sales:
        path = os.path.join(args.db, "sales_%d.db" % n)
        make_sales(path, n)
    else:
        path = os.path.join(args.db, "lineitem_%d.db" % n)
        lineitem.make(path, n)
    ncpu = os.cpu_count() or 1
    threads = args.threads or ncpu

    cons = {"sqlite": bench_db.connect(path, LIB)}
    if "gpu_query" in modes:
        cons["gpu_query"] = bench_db.connect(path, LIB, [("threads", args.threads)])
    if "cache" in modes:
        cc = cons["cache"] = bench_db.connect(path, LIB, [("threads", args.threads),
                                                          ("device", args.cache_device)])
        t0 = time.perf_counter()
        cc.execute("SELECT gpu_cache(?, ?)", ("sales" if sales else "lineitem",
                                             SALES_CACHE if sales else LINEITEM_CACHE)).fetchall()
        e = json.loads(cc.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]["entries"]
        print("# cache: loaded in %.0f ms into %s memory" % ((time.perf_counter() - t0) * 1e3,
                                                              e[0].get("where") if e else "?"),
              flush=True)
    runs = {}  # (mode, q) -> runnable
    for mode in ("gpu_query", "cache"):
        if mode not in cons:
            continue
        for q in queries:
            try:
                cons[mode].execute("DROP TABLE IF EXISTS temp.%s" % q)
                cons[mode].execute("CREATE VIRTUAL TABLE temp.%s USING gpu_query('%s')"
                                   % (q, table[q][0].replace("'", "''")))
                runs[(mode, q)] = True
            except sqlite3.Error as e:
                print("# %s %s: refused: %s" % (mode, q, e), flush=True)
    duck = None
    if "duckdb" in modes:
        duck = DuckDB(args, n, duck_build(n) if sales else None)
        if duck.why:
            print("# SKIP duckdb: %s" % duck.why, flush=True)
            duck = None
    for q in queries:
        runs[("sqlite", q)] = True
        if duck:
            runs[("duckdb", q)] = True

    ref = {q: typed(cons["sqlite"].execute(gpu_text(table[q][0])).fetchall()) for q in queries}
    bad = 0
    times = {}
    with open(csv_path, "a") as out:
        for rep in range(args.reps):
            order = modes[rep % len(modes):] + modes[:rep % len(modes)]
            for q in queries:
                for mode in order:
                    if (mode, q) not in runs:
                        continue
                    if mode == "sqlite" and args.sqlite_reps is not None \
                            and rep >= args.sqlite_reps:
                        continue
                    path_, why = "", ""
                    if mode == "duckdb":
                        try:
                            s, rows = duck.query(table[q][1] or table[q][0])
                        except RuntimeError as e:
                            print("# duckdb %s: %s" % (q, e), flush=True)
                            runs.pop((mode, q))
                            continue
                        ms = s * 1e3
                        plain = [tuple(v for _, v in r) for r in ref[q]]
                        if rep == 0 and not close_rows(plain, rows):
                            print("# duckdb %s: rows differ (loosely) from the exact reference"
                                  % q, flush=True)
                    else:
                        con = cons[mode]
                        sql = table[q][0] if mode == "sqlite" else "SELECT * FROM %s" % q
                        t0 = time.perf_counter()
                        rows = con.execute(sql).fetchall()
                        ms = (time.perf_counter() - t0) * 1e3
                        if mode != "sqlite":
                            path_, why = scan_info(con)
                            if typed(rows) != ref[q]:
                                bad += 1
                                print("# WRONG %s %s rep %d: %r != %r" % (
                                    mode, q, rep, rows[:3], ref[q][:3]), flush=True)
                    t = {"sqlite": 1, "duckdb": args.duckdb_threads}.get(mode, threads)
                    times.setdefault((mode, q), []).append(ms)
                    out.write("%s,%s,%d,%s,%s,%d,%d,%.3f,%s,%s\n" % (
                        args.machine, args.set, n, q, mode, t, rep, ms, path_, why[:200].replace(",", ";")))
                    out.flush()
    print("# %s, %d rows, %d reps, threads %d; medians in ms (x = sqlite / mode)"
          % (args.set, n, args.reps, threads))
    for q in queries:
        base = statistics.median(times[("sqlite", q)]) if ("sqlite", q) in times else None
        cells = []
        for mode in modes:
            v = times.get((mode, q))
            if v:
                m = statistics.median(v)
                cells.append("%s %.1f (%sx)" % (mode, m, "%.2f" % (base / m) if base else "-"))
            else:
                cells.append("%s -" % mode)
        print("%-12s %s" % (q, "  ".join(cells)), flush=True)
    if duck:
        duck.close()
    print("# csv: %s" % csv_path)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
