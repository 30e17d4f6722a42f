#!/usr/bin/python3
"""gpu_query's analytics benchmark (issue 19): TPC-H Q1 and Q6 and three
dashboard queries over a lineitem-shaped table, through SQLite's own text,
through the gpu_query virtual table (all cores and one thread) and through
DuckDB, on the same rows, in the same run.

  bench/query_bench.py [--rows 6e6] [--reps 5] [--db DIR] [--csv FILE]
                       [--machine NAME] [--threads 0] [--queries q1,q6,d1,d2,d3,d4,d5,d6]
                       [--modes sqlite,gpu_query,gpu_query_t1,duckdb,cache,cache_base]
                       [--base-lib LIB] [--cache-device cpu]
                       [--duckdb-threads 2] [--duckdb-dir bench/duckdb]

The table: bench/lineitem.py's (TPC-H's lineitem columns and value ranges,
integer hashes of the row number), a file DIR/lineitem_<rows>.db made once
and kept (rollback journal; the page cache is warm before timing: the
reference answers below read every row first).  DuckDB builds the same
rows with the same integer arithmetic in an in-memory native table
(BIGINT, DOUBLE, VARCHAR: the dates are ISO text there too, so that every
mode runs the same query text).

Queries (QUERIES below; parameters bound as ?N, in gpu_query as the table
function's arguments):
  q1  TPC-H Q1: l_shipdate <= '1998-09-02', 2 TEXT keys (4 groups), 5 sums
      (of products too), 3 averages, count(*)
  q6  TPC-H Q6: one sum(l_extendedprice * l_discount) under a date range,
      l_discount BETWEEN 0.05 AND 0.07 and l_quantity < 24
  d1  revenue, total(quantity) and lines by l_shipmode and year
      (substr(l_shipdate, 1, 4)) since 1995: 28 groups, ORDER BY both
  d2  the top 10 (l_suppkey, l_shipmode, l_returnflag) by revenue in
      1993..1996: rows/600 * 21 groups, ORDER BY revenue DESC LIMIT 10
  d3  a ratio sum(a) / sum(b), avg, min and max of TEXT dates by
      (l_shipinstruct, l_linenumber) for l_quantity >= 10, HAVING
      sum(l_quantity) > a threshold that keeps 16 of the 28 groups
  d4  (issue 37) sum(l_quantity) by l_partkey over the rows shipped in 1995,
      HAVING it > 60: rows/30 groups (200,000 at 6e6 rows), about 4.3 rows
      each, 161,104 kept at 6e6 rows; no ORDER BY (rows compared sorted)
  d5  (issue 37) the top 10 of rows/600 suppliers by count(*), with
      sum(l_quantity): ORDER BY c DESC, l_suppkey LIMIT 10
  d6  (issue 37) count, sum, avg and max by l_linenumber (7 groups)
Modes: sqlite (SQLite's own text), gpu_query (`CREATE VIRTUAL TABLE temp.q
USING gpu_query('<the same text>')`, then `SELECT * FROM q(params)`;
threads = --threads, 0 = every core), gpu_query_t1 (the same, threads = 1),
duckdb (bench/duckdb_query.mjs through node with @duckdb/node-api, with
--duckdb-threads; skipped with a message when node or the package is
absent: make bench-duckdb-setup; DuckDB has no total(): sum() there).
The three SQLite modes use connections opened alike (bench_db.connect: the
extension loaded, default pragmas).  Every rep runs every mode once, in
turn, the first mode rotating with the rep; the summary is medians and
their ratio to sqlite's median in the same run (x = sqlite / mode: above
1 is faster than SQLite).  A mode's first call is timed like the others
(rep 0); the virtual tables' CREATE is not (it is printed).

Mode cache_base (issue 37): the cache mode with another build of the
extension (--base-lib, e.g. the commit before a change), loaded into its own
connection (the builds' symbols are hidden: both live in one process), so
that a change is measured A/B in one run, interleaved rep by rep.

Mode cache (issue 20): gpu_query answered from gpu_cache's entry of
CACHE_COLS (on the GPU when there is one, --cache-device), loaded once
before the reps.  The load is timed (--load-reps loads, dropped between)
against the parallel scan of the same columns in the same run (gpu_query's
SELECT count(c) ... over them, uncached): CSV query "load" and "scan".
With --no-ref, the cache's rows are checked against the uncached
gpu_query's instead (run once, untimed).

Checks: gpu_query's rows (every rep, both modes) must equal, value and
type, the rows of SQLite's own text with sum/total/avg/min/max replaced by
gpu_sum/gpu_total/gpu_avg/gpu_min/gpu_max (run once, untimed): a check line
per query, and exit status 1 otherwise.  DuckDB's rows are compared to the
same reference loosely (same count, text and integers equal, floats within
1e-9 relative) and reported, not failed.  How far SQLite's own sums are from
the exact ones is reported too.

CSV (one line per measurement): machine, rows, query, mode, threads, rep,
ms, path, scan_threads, load1, result_rows, cpu_ms, other_ms.  `threads` is
the mode's setting (sqlite: 1, gpu_query: --threads or the CPU count,
duckdb: its threads); `path` and `scan_threads` are gpuagg_info()'s
last_scan.path and .threads after a gpu_query call ('sqlite' or 'duckdb'
and empty elsewhere).  `cpu_ms` is the CPU time the call took (this
process, every thread; DuckDB's: the node process's), `other_ms` the CPU
time every other process of the machine took meanwhile (/proc/stat's busy
time less cpu_ms, 10 ms ticks): on a shared machine it tells whether the
threads had their cores (2 threads on 2 cores: cpu_ms near 2 x ms).
Default CSV: bench/results/query_<machine>_<date>.csv (appended to).
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

import bench_db
import lineitem

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")

# name -> (text, parameters for n rows)
QUERIES = {
    "q1": ("SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
           "sum(l_extendedprice) AS sum_base_price, "
           "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
           "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
           "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, "
           "avg(l_discount) AS avg_disc, count(*) AS count_order "
           "FROM lineitem WHERE l_shipdate <= ?1 "
           "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
           lambda n: ("1998-09-02",)),
    "q6": ("SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem "
           "WHERE l_shipdate >= ?1 AND l_shipdate < ?2 AND l_discount BETWEEN ?3 AND ?4 "
           "AND l_quantity < ?5",
           lambda n: ("1994-01-01", "1995-01-01", 0.05, 0.07, 24)),
    "d1": ("SELECT l_shipmode, substr(l_shipdate, 1, 4) AS year, "
           "sum(l_extendedprice * (1 - l_discount)) AS revenue, total(l_quantity) AS qty, "
           "count(*) AS lines FROM lineitem WHERE l_shipdate >= ?1 "
           "GROUP BY l_shipmode, substr(l_shipdate, 1, 4) ORDER BY l_shipmode, year",
           lambda n: ("1995-01-01",)),
    "d2": ("SELECT l_suppkey, l_shipmode, l_returnflag, "
           "sum(l_extendedprice * (1 - l_discount)) AS revenue, sum(l_quantity) AS qty, "
           "max(l_discount) AS max_disc, count(*) AS lines FROM lineitem "
           "WHERE l_shipdate >= ?1 AND l_shipdate < ?2 "
           "GROUP BY l_suppkey, l_shipmode, l_returnflag "
           "ORDER BY revenue DESC, l_suppkey, l_shipmode, l_returnflag LIMIT 10",
           lambda n: ("1993-01-01", "1997-01-01")),
    # a (instruct, linenumber) group holds about n/4 * (8 - linenumber)/28 rows, 41/50 of
    # them with l_quantity >= 10 (30 on average): the threshold is linenumber 4.5's sum
    "d3": ("SELECT l_shipinstruct, l_linenumber, "
           "sum(l_extendedprice * l_discount) / sum(l_extendedprice) AS disc_ratio, "
           "avg(l_tax) AS avg_tax, min(l_commitdate) AS first_commit, "
           "max(l_receiptdate) AS last_receipt, count(*) AS lines FROM lineitem "
           "WHERE l_quantity >= ?1 GROUP BY l_shipinstruct, l_linenumber "
           "HAVING sum(l_quantity) > ?2 ORDER BY disc_ratio DESC, l_shipinstruct, l_linenumber",
           lambda n: (10, int(n * 0.25 * 3.5 / 28 * 0.82 * 30))),
    # many groups (issue 37): a part's rows (30 of them) shipped in one year, about 4.3 of
    # quantity 25.5 on average, HAVING over every part (rows/30 groups)
    "d4": ("SELECT l_partkey, sum(l_quantity) AS q FROM lineitem "
           "WHERE l_shipdate BETWEEN ?1 AND ?2 GROUP BY l_partkey HAVING sum(l_quantity) > ?3",
           lambda n: ("1995-01-01", "1995-12-31", 60)),
    # the top 10 of rows/600 suppliers by lines
    "d5": ("SELECT l_suppkey, count(*) AS c, sum(l_quantity) AS q FROM lineitem "
           "GROUP BY l_suppkey ORDER BY c DESC, l_suppkey LIMIT 10",
           lambda n: ()),
    # 7 groups of a small INTEGER key, no filter
    "d6": ("SELECT l_linenumber, count(*) AS c, sum(l_quantity) AS q, "
           "avg(l_extendedprice) AS p, max(l_discount) AS d FROM lineitem "
           "GROUP BY l_linenumber ORDER BY l_linenumber",
           lambda n: ()),
}
MODES = ["sqlite", "gpu_query", "gpu_query_t1", "duckdb", "cache", "cache_base"]
# the columns the queries read: what the cache mode loads (issue 20)
CACHE_COLS = ("l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax, "
              "l_shipdate, l_shipmode, l_suppkey, l_shipinstruct, l_linenumber, l_commitdate, "
              "l_receiptdate, l_partkey")


def gpu_text(sql):
    """The reference: the built-in aggregates replaced by gpuagg's exact ones."""
    return re.sub(r"\b(sum|total|avg|min|max)\s*\(", r"gpu_\1(", sql)


def duck_text(sql):
    return re.sub(r"\btotal\s*\(", "sum(", sql)


def typed(rows, sql=None):
    """rows as (type, repr) tuples; sorted when sql has no ORDER BY (its
    rows come in no particular order)."""
    t = [tuple((type(v).__name__, repr(v)) for v in r) for r in rows]
    return sorted(t) if sql is not None and not re.search(r"\bORDER\s+BY\b", sql, re.I) else t


def close(a, b, rel=1e-9):
    """DuckDB against the exact reference: text and integers equal, floats
    within rel."""
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    return a == b


def compare_loose(ref, got):
    """None when got matches ref loosely, else a description."""
    if len(ref) != len(got):
        return "%d rows against %d" % (len(got), len(ref))
    for i, (r, g) in enumerate(zip(ref, got)):
        if len(r) != len(g) or not all(close(x, y) for x, y in zip(r, g)):
            return "row %d: %r against %r" % (i, g, r)
    return None


def rel_err(ref, got):
    """(values that differ, the largest relative difference) of two answers
    of the same shape (SQLite's own text against the exact reference)."""
    n, worst = 0, 0.0
    for r, g in zip(ref, got):
        for x, y in zip(r, g):
            if isinstance(x, float) and isinstance(y, float) and x != y:
                n += 1
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
    return n, worst


class DuckDB:
    """bench/duckdb_query.mjs as a child process, one request a line;
    `builds`: the CREATE statements of its tables (default: lineitem's n
    rows; bench/dashboard_bench.py passes its own)."""

    def __init__(self, args, n, builds=None):
        node = shutil.which("node")
        mod = os.path.join(args.duckdb_dir, "node_modules", "@duckdb", "node-api")
        self.why = None
        if not node:
            self.why = "no node"
        elif not os.path.isdir(mod):
            self.why = "no %s (make bench-duckdb-setup installs it with npm)" % mod
        if self.why:
            return
        self.p = subprocess.Popen([node, os.path.join(HERE, "duckdb_query.mjs"),
                                   str(args.duckdb_threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd=args.duckdb_dir)
        total = 0.0
        for sql in builds or [lineitem.duckdb_sql(n)]:
            d = self.ask({"op": "build", "sql": sql})
            if "error" in d:
                self.why = "its table: " + d["error"]
                self.close()
                return
            total += d["build_s"]
        print("# duckdb built its tables in %.1f s (%d threads)"
              % (total, args.duckdb_threads), flush=True)

    def ask(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            return {"error": "node exited (%s)" % self.p.wait()}
        return json.loads(line)

    def query(self, sql, params=()):
        d = self.ask({"op": "query", "sql": duck_text(sql), "params": list(params)})
        if "error" in d:
            raise RuntimeError(d["error"])
        return d["seconds"], lineitem.duck_rows(d)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def busy_ms():
    """The machine's busy CPU time so far (/proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)     # idle + iowait
    return (sum(v[:8]) - idle) * 1000.0 / os.sysconf("SC_CLK_TCK")


def proc_cpu_ms(pid):
    """utime + stime of process pid (every thread), in ms."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def scan_info(con):
    s = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}
    return s.get("path", ""), s.get("threads", ""), s.get("why", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="6e6")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--db", default="/tmp/gpuagg_query_bench")
    ap.add_argument("--csv", default=None,
                    help="default bench/results/query_<machine>_<date>.csv")
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--threads", type=int, default=0,
                    help="gpu_query's gpuagg_config threads (0: every core)")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--no-ref", action="store_true",
                    help="skip the untimed gpu_ reference (and every check): "
                         "for a short lease on a slow machine, where the "
                         "checks ran before")
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    ap.add_argument("--cache-device", default="auto", help="cache mode: auto or cpu")
    ap.add_argument("--load-reps", type=int, default=3)
    ap.add_argument("--base-lib", default=None,
                    help="mode cache_base: the cache mode with this build of the "
                         "extension (an A/B in one run; default: none)")
    args = ap.parse_args()
    n = int(float(args.rows))
    queries = args.queries.split(",")
    modes = args.modes.split(",")
    for q in queries:
        if q not in QUERIES:
            ap.error("unknown query %r (%s)" % (q, ",".join(QUERIES)))
    for m in modes:
        if m not in MODES:
            ap.error("unknown mode %r (%s)" % (m, ",".join(MODES)))
    csv_path = args.csv or os.path.join(HERE, "results", "query_%s_%s.csv"
                                        % (args.machine, time.strftime("%Y-%m-%d")))
    os.makedirs(args.db, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    path = os.path.join(args.db, "lineitem_%d.db" % n)
    lineitem.make(path, n)
    ncpu = os.cpu_count() or 1

    cons = {"sqlite": bench_db.connect(path, LIB)}
    if "gpu_query" in modes:
        cons["gpu_query"] = bench_db.connect(path, LIB, [("threads", args.threads)])
    if "gpu_query_t1" in modes:
        cons["gpu_query_t1"] = bench_db.connect(path, LIB, [("threads", 1)])
    load_ms, scan_ms = [], []
    if "cache" in modes:
        cc = cons["cache"] = bench_db.connect(path, LIB, [("threads", args.threads),
                                                          ("device", args.cache_device)])
        ncols = len(CACHE_COLS.split(","))
        scan_sql = "SELECT %s FROM lineitem" % ", ".join(
            "count(%s)" % c.strip() for c in CACHE_COLS.split(","))
        sc = bench_db.connect(path, LIB, [("threads", args.threads)])  # no entry: the scan
        sc.execute("CREATE VIRTUAL TABLE temp.scan_cols USING gpu_query('%s')" % scan_sql)
        for rep in range(args.load_reps):
            t0 = time.perf_counter()
            sc.execute("SELECT * FROM scan_cols").fetchall()
            scan_ms.append((time.perf_counter() - t0) * 1e3)
            path_, sthreads, _ = scan_info(sc)
            cc.execute("SELECT gpu_cache_drop('lineitem')").fetchall()
            t0 = time.perf_counter()
            cc.execute("SELECT gpu_cache('lineitem', ?)", (CACHE_COLS,)).fetchall()
            load_ms.append((time.perf_counter() - t0) * 1e3)
        info = json.loads(cc.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]
        e = info["entries"][0] if info["entries"] else {}
        print("# cache: %d columns loaded into %s memory in %.0f ms (median of %d; %s), the "
              "parallel scan of the same columns %.0f ms (%s): load / scan %.2f; %d bytes, "
              "text %s" % (ncols, e.get("where"), statistics.median(load_ms), len(load_ms),
                           e.get("how"), statistics.median(scan_ms), path_,
                           statistics.median(load_ms) / statistics.median(scan_ms),
                           e.get("bytes", 0), e.get("text")), flush=True)
    if "cache_base" in modes:
        if not args.base_lib:
            ap.error("mode cache_base needs --base-lib")
        cb = cons["cache_base"] = bench_db.connect(path, args.base_lib, [
            ("threads", args.threads), ("device", args.cache_device)])
        t0 = time.perf_counter()
        cb.execute("SELECT gpu_cache('lineitem', ?)", (CACHE_COLS,)).fetchall()
        print("# cache_base: %s loaded in %.0f ms" % (args.base_lib, (time.perf_counter() - t0) * 1e3),
              flush=True)
    vt = {}  # (mode, query) -> the virtual table's name
    for mode in ("gpu_query", "gpu_query_t1", "cache", "cache_base"):
        if mode not in cons:
            continue
        try:
            for q in queries:
                sql = QUERIES[q][0]
                t0 = time.perf_counter()
                cons[mode].execute("DROP TABLE IF EXISTS temp.%s" % q)
                cons[mode].execute("CREATE VIRTUAL TABLE temp.%s USING gpu_query('%s')"
                                   % (q, sql.replace("'", "''")))
                print("# %s: CREATE VIRTUAL TABLE temp.%s in %.1f ms"
                      % (mode, q, (time.perf_counter() - t0) * 1e3), flush=True)
                vt[(mode, q)] = q
        except sqlite3.Error as e:
            print("# SKIP %s: %s" % (mode, e), flush=True)
            cons.pop(mode).close()
            modes.remove(mode)
    duck = None
    if "duckdb" in modes:
        duck = DuckDB(args, n)
        if duck.why:
            print("# SKIP duckdb: %s" % duck.why, flush=True)
            modes.remove("duckdb")
            duck = None

    # the exact reference (untimed; it also warms the page cache)
    ref = {}
    for q in queries:
        if args.no_ref and "cache" in modes:  # the uncached gpu_query's rows instead
            sql, params = QUERIES[q][0], QUERIES[q][1](n)
            g = bench_db.connect(path, LIB, [("threads", args.threads)])
            g.execute("CREATE VIRTUAL TABLE temp.r USING gpu_query('%s')" % sql.replace("'", "''"))
            ref[q] = g.execute("SELECT * FROM r(%s)" % ", ".join("?" * len(params)),
                               params).fetchall()
            g.close()
            continue
        if args.no_ref:
            ref[q] = None
            continue
        sql, params = QUERIES[q][0], QUERIES[q][1](n)
        t0 = time.perf_counter()
        ref[q] = cons["sqlite"].execute(gpu_text(sql), params).fetchall()
        print("# reference %s: %d rows in %.0f ms" % (q, len(ref[q]),
                                                      (time.perf_counter() - t0) * 1e3),
              flush=True)

    out = open(csv_path, "a")
    if out.tell() == 0:
        out.write("machine,rows,query,mode,threads,rep,ms,path,scan_threads,load1,result_rows,"
                  "cpu_ms,other_ms\n")
    mode_threads = {"sqlite": 1, "gpu_query": args.threads or ncpu, "gpu_query_t1": 1,
                    "duckdb": args.duckdb_threads, "cache": args.threads or ncpu,
                    "cache_base": args.threads or ncpu}
    for i, (lm, sm) in enumerate(zip(load_ms, scan_ms)):
        for what, ms in (("load", lm), ("scan", sm)):
            out.write("%s,%d,%s,cache,%d,%d,%.3f,%s,,%.2f,0,,\n"
                      % (args.machine, n, what, mode_threads["cache"], i, ms, what,
                         os.getloadavg()[0]))
    res = {}        # (query, mode) -> [ms]
    cores = {}      # (query, mode) -> [(cpu_ms / ms, other_ms / ms)]
    bad = {}        # (query, mode) -> first mismatch
    paths = {}      # (query, mode) -> {path (why)}
    duck_diff = {}  # query -> None or a description
    own = {}        # query -> SQLite's own rows (rep 0)
    for q in queries:
        sql, params = QUERIES[q][0], QUERIES[q][1](n)
        for rep in range(args.reps):
            k = rep % len(modes)
            for mode in modes[k:] + modes[:k]:
                path_, sthreads = mode, ""
                b0 = busy_ms()
                if mode == "duckdb":
                    c0 = proc_cpu_ms(duck.p.pid)
                    secs, rows = duck.query(sql, params)
                    cpu = proc_cpu_ms(duck.p.pid) - c0
                else:
                    con = cons[mode]
                    text = sql if mode == "sqlite" else "SELECT * FROM %s(%s)" % (
                        vt[(mode, q)], ", ".join("?" * len(params)))
                    c0, t0 = time.process_time(), time.perf_counter()
                    rows = con.execute(text, params).fetchall()
                    secs = time.perf_counter() - t0
                    cpu = (time.process_time() - c0) * 1e3
                    if mode != "sqlite":
                        path_, sthreads, why = scan_info(con)
                        paths.setdefault((q, mode), set()).add(
                            "%s/%s" % (path_, sthreads) + (" (%s)" % why if why else ""))
                        if (ref[q] is not None and typed(rows, sql) != typed(ref[q], sql)
                                and (q, mode) not in bad):
                            bad[(q, mode)] = rows
                    elif rep == 0:
                        own[q] = rows
                if mode == "duckdb" and q not in duck_diff and ref[q] is not None:
                    duck_diff[q] = (compare_loose(ref[q], rows) if re.search(r"\bORDER\s+BY\b", sql, re.I)
                                    else compare_loose(sorted(ref[q]), sorted(rows)))
                other = "" if b0 is None else "%.0f" % max(0.0, busy_ms() - b0 - cpu)
                out.write("%s,%d,%s,%s,%d,%d,%.3f,%s,%s,%.2f,%d,%.0f,%s\n"
                          % (args.machine, n, q, mode, mode_threads[mode], rep, secs * 1e3,
                             path_, sthreads, os.getloadavg()[0], len(rows), cpu, other))
                out.flush()
                res.setdefault((q, mode), []).append(secs * 1e3)
                cores.setdefault((q, mode), []).append(
                    (cpu / (secs * 1e3), None if b0 is None else float(other) / (secs * 1e3)))
    out.close()
    if duck:
        duck.close()

    for q in queries:
        if ref[q] is None:
            print("# check: %s not checked (--no-ref); last_scan %s" % (
                q, ", ".join(sorted(paths.get((q, "gpu_query"), ())))))
            continue
        for mode in ("gpu_query", "gpu_query_t1", "cache", "cache_base"):
            if mode not in modes:
                continue
            if (q, mode) in bad:
                print("# FAIL: %s %s differs from the gpu_ text:\n#   query: %s\n#   params: %r"
                      "\n#   got:      %r\n#   expected: %r"
                      % (q, mode, QUERIES[q][0], QUERIES[q][1](n), bad[(q, mode)], ref[q]))
            else:
                print("# check: %s %s = the gpu_ text in all %d reps (%d rows, every value "
                      "and type); last_scan %s" % (q, mode, args.reps, len(ref[q]),
                                                   ", ".join(sorted(paths[(q, mode)]))))
        if q in duck_diff:
            if duck_diff[q] is None:
                print("# duckdb: %s agrees with the exact reference within 1e-9 (%d rows)"
                      % (q, len(ref[q])))
            else:
                print("# duckdb: %s DIFFERS from the exact reference: %s" % (q, duck_diff[q]))
        if q in own:
            nd, worst = rel_err(ref[q], own[q])
            print("# sqlite's own %s: %d REAL values differ from the exact ones "
                  "(largest relative difference %.1e)" % (q, nd, worst))
    print("# %s, %d rows, %d CPUs, gpu_query threads %d; median ms (x = sqlite's median / "
          "the mode's, same run); cores: the call's CPU time / wall, others': the rest of the "
          "machine's (medians)" % (args.machine, n, ncpu, mode_threads.get("gpu_query", 0)))
    for q in queries:
        base = statistics.median(res[(q, "sqlite")]) if (q, "sqlite") in res else None
        for mode in modes:
            v = res.get((q, mode))
            if not v:
                continue
            m = statistics.median(v)
            if base is None:
                print("%-3s %-13s %10.3f ms  (%d reps)" % (q, mode, m, len(v)))
                continue
            own_ = statistics.median(c for c, _ in cores[(q, mode)])
            oth = [o for _, o in cores[(q, mode)] if o is not None]
            print("%-3s %-13s %10.1f ms  x%6.2f  (%d reps)  cores %.2f, others' %s"
                  % (q, mode, m, base / m if base else float("nan"), len(v), own_,
                     "%.2f" % statistics.median(oth) if oth else "?"))
    if (("q1", "gpu_query") in res and ("q1", "sqlite") in res):
        x = statistics.median(res[("q1", "sqlite")]) / statistics.median(res[("q1", "gpu_query")])
        print("# target q1 gpu_query >= 3x sqlite: %.2fx, %s" % (x, "met" if x >= 3 else "NOT met"))
    t1 = [(q, statistics.median(res[(q, "gpu_query_t1")]) / statistics.median(res[(q, "sqlite")]))
          for q in queries if (q, "gpu_query_t1") in res and (q, "sqlite") in res]
    if t1:
        worst = max(t1, key=lambda t: t[1])
        print("# target gpu_query_t1 <= 1.15x sqlite's time on every query: worst %s %.2fx, %s"
              % (worst[0], worst[1], "met" if worst[1] <= 1.15 else "NOT met"))
    print("# csv: %s" % csv_path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
