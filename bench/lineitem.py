#!/usr/bin/python3
"""A TPC-H-lineitem-shaped table for the analytics benchmark
(bench/query_bench.py, issue 19), in a SQLite file or as DuckDB SQL.

  bench/lineitem.py --rows 6e6 --db FILE        make FILE (kept and reused
                                                when it holds the same rows)
  bench/lineitem.py --rows 1e5 --duckdb-sql     print DuckDB's CREATE TABLE
  bench/lineitem.py --rows 1e5 --db FILE --ranges
                                                value ranges, counts per key
  bench/lineitem.py --selftest 3000             the first 3000 rows made by
                                                SQLite and by DuckDB (node and
                                                @duckdb/node-api) must be equal

The table, TPC-H's columns and types (INTEGER, REAL, TEXT; DuckDB: BIGINT,
DOUBLE, VARCHAR), row i = 1..rows, every value an integer hash of i (no
random(): the same rows every time, in SQLite and in DuckDB):
  u_c        = (i * A_c + B_c) % P,  h_c = u_c * u_c % P   (P = 2^31 - 1,
               one multiplier A_c a column, squared: not linear in i)
  orders     blocks of 28 rows = 7 orders of 1..7 lines: l_orderkey,
             l_linenumber (1..7, 4 lines an order on average)
  l_partkey  1 + h % (rows / 30)   (200000 at 6e6 rows, TPC-H's SF 1)
  l_suppkey  1 + h % (rows / 600)  (10000 at 6e6 rows)
  l_quantity 1..50 (REAL); l_extendedprice = quantity * the part's retail
             price (TPC-H's formula, in cents, / 100.0: 901.00..104949.50);
             l_discount 0.00..0.10 and l_tax 0.00..0.08 (k / 100.0)
  dates      ISO TEXT: the order's date (a hash of l_orderkey) in
             1992-01-01..1998-08-02; l_shipdate = it + 1..121 days
             (1992-01-02..1998-12-01), l_commitdate = it + 30..90,
             l_receiptdate = l_shipdate + 1..30
  l_returnflag 'R' or 'A' when l_receiptdate <= 1995-06-17, else 'N';
  l_linestatus 'O' when l_shipdate > 1995-06-17, else 'F' (TPC-H's rules)
  l_shipinstruct 4 values, l_shipmode 7 ('REG AIR', 'AIR', 'RAIL', 'SHIP',
             'TRUCK', 'MAIL', 'FOB'), l_comment 10..43 characters of a fixed
             text at a hashed offset
Products stay below 2^63 (no REAL overflow in SQLite, no error in DuckDB)
for up to 4e9 rows.  The SQLite file gets a table lineitem_meta(rows,
version); a file with other rows or another version is made anew (through
FILE.tmp, then renamed).  With the sqlite3 CLI (SQLITE3, default sqlite3)
the rows come from its generate_series (--jobs processes make row ranges
side by side, one copies them in order), else from a recursive CTE in
Python's sqlite3.  Prints nothing else than '# made ...' or '# reusing ...'.
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = 1
P = 2147483647
# one (A, B) a hashed quantity: distinct odd multipliers below 2^31
HASH = {
    "part": (1103515245, 12345), "supp": (1664525, 1013904223), "qty": (22695477, 1),
    "disc": (134775813, 7), "tax": (214013, 2531011), "commit": (1140671485, 12820163),
    "ship": (65793, 4282663), "receipt": (843314861, 453816693), "flag": (1566083941, 3),
    "instr": (1812433253, 11), "mode": (69069, 5), "coff": (1597334677, 13),
    "clen": (741103597, 17), "order": (1229782941, 19),
}
DAY0 = "1992-01-01"
JD0 = 2448622.5           # julianday('1992-01-01')
ORDER_DAYS = 2406         # 1992-01-01 .. 1998-08-02
CURRENT = 1263            # 1995-06-17, in days from 1992-01-01
INSTRUCT = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
POOL = ("furiously regular deposits sleep quickly among the final pinto beans; "
        "carefully ironic accounts haggle slyly above the express packages. "
        "blithely even requests nag fluffily according to the bold foxes, "
        "pending theodolites wake silently along the unusual ideas; quietly "
        "special instructions cajole daringly about the ruthless dependencies.")
COLUMNS = [("l_orderkey", "INTEGER"), ("l_partkey", "INTEGER"), ("l_suppkey", "INTEGER"),
           ("l_linenumber", "INTEGER"), ("l_quantity", "REAL"), ("l_extendedprice", "REAL"),
           ("l_discount", "REAL"), ("l_tax", "REAL"), ("l_returnflag", "TEXT"),
           ("l_linestatus", "TEXT"), ("l_shipdate", "TEXT"), ("l_commitdate", "TEXT"),
           ("l_receiptdate", "TEXT"), ("l_shipinstruct", "TEXT"), ("l_shipmode", "TEXT"),
           ("l_comment", "TEXT")]
DUCK_TYPE = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR"}


def _h(name, x="i"):
    a, b = HASH[name]
    u = "((%s * %d + %d) %% %d)" % (x, a, b, P)
    return "(%s * %s %% %d)" % (u, u, P)


def _pick(expr, values):
    return "CASE %s %s END" % (expr, " ".join("WHEN %d THEN '%s'" % (k, v)
                                              for k, v in enumerate(values)))


def select_sql(n, dialect, source):
    """SELECT of the 16 columns for i in `source` (a FROM item with a column
    i), in dialect 'sqlite' or 'duckdb' (they differ in integer division, in
    REAL casts and in day number -> ISO text)."""
    div = "/" if dialect == "sqlite" else "//"
    real = (lambda e: "(%s) * 1.0" % e) if dialect == "sqlite" else \
        (lambda e: "CAST(%s AS DOUBLE)" % e)
    if dialect == "sqlite":
        iso = lambda d: "date(%.1f + %s)" % (JD0, d)
    else:
        iso = lambda d: "CAST(DATE '%s' + CAST(%s AS INTEGER) AS VARCHAR)" % (DAY0, d)
    nparts, nsupp = max(1, n // 30), max(1, n // 600)
    k = " + ".join("CAST(p >= %d AS INTEGER)" % s for s in (1, 3, 6, 10, 15, 21))
    # level 1: the order and line of row i
    l1 = ("SELECT i, (i - 1) {d} 28 * 7 + ({k}) + 1 AS okey, ({k}) AS kk, p "
          "FROM (SELECT i, (i - 1) % 28 AS p FROM {src}) s0").format(d=div, k=k, src=source)
    # level 2: the integer quantities
    l2 = ("SELECT okey, p - kk * (kk + 1) {d} 2 + 1 AS lnum, "
          "1 + {part} % {np} AS pk, 1 + {supp} % {ns} AS sk, 1 + {qty} % 50 AS q, "
          "{disc} % 11 AS dk, {tax} % 9 AS tk, {order} % {od} AS od, {commit} % 61 AS cd, "
          "1 + {ship} % 121 AS sd, 1 + {receipt} % 30 AS rd, {flag} % 2 AS fl, "
          "{instr} % 4 AS si, {mode} % 7 AS sm, {coff} % {cmax} AS co, "
          "10 + {clen} % 34 AS cl FROM ({l1}) s1").format(
              d=div, np=nparts, ns=nsupp, od=ORDER_DAYS, cmax=len(POOL) - 43, l1=l1,
              order=_h("order", "okey"),
              **{name: _h(name) for name in HASH if name != "order"})
    # level 3: the retail price (TPC-H: 90000 + (pk/10) % 20001 + 100 * (pk % 1000) cents)
    # and the days
    l3 = ("SELECT *, q * (90000 + (pk {d} 10) % 20001 + 100 * (pk % 1000)) AS cents, "
          "od + sd AS ship, od + 30 + cd AS cmt FROM ({l2}) s2").format(d=div, l2=l2)
    cols = [
        "okey", "pk", "sk", "lnum", real("q"), "%s / 100.0" % real("cents"),
        "%s / 100.0" % real("dk"), "%s / 100.0" % real("tk"),
        "CASE WHEN ship + rd <= %d THEN (CASE fl WHEN 0 THEN 'R' ELSE 'A' END) ELSE 'N' END"
        % CURRENT,
        "CASE WHEN ship > %d THEN 'O' ELSE 'F' END" % CURRENT,
        iso("ship"), iso("cmt"), iso("ship + rd"), _pick("si", INSTRUCT), _pick("sm", MODES),
        "substr('%s', co + 1, cl)" % POOL,
    ]
    return "SELECT %s FROM (%s) s3" % (
        ", ".join("%s AS %s" % (e, c) for e, (c, _) in zip(cols, COLUMNS)), l3)


def duckdb_sql(n, name="lineitem"):
    """DuckDB's CREATE TABLE of the same n rows (native types)."""
    types = ", ".join("CAST(%s AS %s) AS %s" % (c, DUCK_TYPE[t], c) for c, t in COLUMNS)
    return "CREATE TABLE %s AS SELECT %s FROM (%s) g" % (
        name, types, select_sql(n, "duckdb", "range(1, %d + 1) t(i)" % n))


def create_sql(name="lineitem"):
    return "CREATE TABLE %s(%s)" % (name, ", ".join("%s %s" % c for c in COLUMNS))


def _fill_cte(path, n):
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(create_sql())
    con.execute("BEGIN")
    con.execute("WITH RECURSIVE gen(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM gen WHERE i < %d) "
                "INSERT INTO lineitem %s" % (n, select_sql(n, "sqlite", "gen")))
    con.execute("CREATE TABLE lineitem_meta(rows INTEGER, version INTEGER)")
    con.execute("INSERT INTO lineitem_meta VALUES (?, ?)", (n, VERSION))
    con.execute("COMMIT")
    con.close()


def _cli(cli, path, lines, txn=True):
    script = "\n".join(["PRAGMA journal_mode = OFF;", "PRAGMA synchronous = OFF;"] +
                       (["BEGIN;"] + lines + ["COMMIT;"] if txn else lines))
    return subprocess.Popen([cli, "-bail", path], stdin=subprocess.PIPE, text=True,
                            stdout=subprocess.DEVNULL), script


def _rows_sql(n, a, b):
    """INSERT of rows a..b of an n-row table (values depend on i and n only)."""
    return "INSERT INTO lineitem %s;" % select_sql(
        n, "sqlite", "(SELECT value AS i FROM generate_series(%d, %d)) g" % (a, b))


def _fill_cli(path, n, cli, jobs):
    """One CLI for small tables; else `jobs` CLIs make row ranges into part
    files side by side (the rows are SQL over i: the same as one pass), and
    one copies them in order, so rowid = i as in one pass."""
    meta_sql = ["CREATE TABLE lineitem_meta(rows INTEGER, version INTEGER);",
                "INSERT INTO lineitem_meta VALUES (%d, %d);" % (n, VERSION)]
    if jobs <= 1 or n < 1000000:
        procs = [_cli(cli, path, [create_sql() + ";", _rows_sql(n, 1, n)] + meta_sql)]
        parts = []
    else:
        cuts = [1 + n * k // jobs for k in range(jobs + 1)]
        parts = ["%s.part%d" % (path, k) for k in range(jobs)]
        for f in parts:
            if os.path.exists(f):
                os.remove(f)
        procs = [_cli(cli, parts[k], [create_sql() + ";", _rows_sql(n, cuts[k], cuts[k + 1] - 1)])
                 for k in range(jobs)]
    for p, script in procs:
        p.stdin.write(script)
        p.stdin.close()
    for p, _ in procs:
        if p.wait():
            raise subprocess.CalledProcessError(p.returncode, cli)
    if parts:
        copy = [create_sql() + ";"]
        for f in parts:  # one at a time (SQLite attaches 10 at most), each
            # copied in its own transaction (DETACH needs none open)
            copy += ["ATTACH '%s' AS part;" % f.replace("'", "''"), "BEGIN;",
                     "INSERT INTO lineitem SELECT * FROM part.lineitem;", "COMMIT;",
                     "DETACH part;"]
        copy += ["BEGIN;"] + meta_sql + ["COMMIT;"]
        p, script = _cli(cli, path, copy, txn=False)
        p.communicate(script)
        for f in parts:
            os.remove(f)
        if p.returncode:
            raise subprocess.CalledProcessError(p.returncode, cli)


def meta(path):
    """(rows, version) of an existing file, or None."""
    if not os.path.exists(path):
        return None
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return con.execute("SELECT rows, version FROM lineitem_meta").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None


def make(path, n, quiet=False, jobs=None):
    """FILE with n rows of lineitem, made unless it is already there (with
    the sqlite3 CLI: `jobs` processes, default one per CPU)."""
    if meta(path) == (n, VERSION):
        if not quiet:
            print("# reusing %s (%d rows)" % (path, n), flush=True)
        return False
    t0 = time.time()
    tmp = path + ".tmp"
    for f in (tmp, tmp + "-journal"):
        if os.path.exists(f):
            os.remove(f)
    cli = shutil.which(os.environ.get("SQLITE3", "sqlite3"))
    jobs = jobs or os.cpu_count() or 1
    how = "sqlite3 CLI, %d jobs" % jobs
    if cli:
        try:
            _fill_cli(tmp, n, cli, jobs)
        except subprocess.CalledProcessError:   # a CLI without generate_series
            for f in [tmp] + ["%s.part%d" % (tmp, k) for k in range(jobs)]:
                if os.path.exists(f):
                    os.remove(f)
            cli = None
    if not cli:
        how = "recursive CTE"
        _fill_cte(tmp, n)
    os.replace(tmp, path)
    if not quiet:
        print("# made %s: %d rows in %.1f s (%s, %.0f MB)" %
              (path, n, time.time() - t0, how, os.path.getsize(path) / 1e6), flush=True)
    return True


RANGES = [
    ("rows", "count(*)"),
    ("orderkey", "min(l_orderkey), max(l_orderkey), count(DISTINCT l_orderkey)"),
    ("linenumber", "min(l_linenumber), max(l_linenumber), avg(l_linenumber)"),
    ("partkey", "min(l_partkey), max(l_partkey), count(DISTINCT l_partkey)"),
    ("suppkey", "min(l_suppkey), max(l_suppkey), count(DISTINCT l_suppkey)"),
    ("quantity", "min(l_quantity), max(l_quantity), avg(l_quantity), typeof(l_quantity)"),
    ("extendedprice", "min(l_extendedprice), max(l_extendedprice), avg(l_extendedprice)"),
    ("discount", "min(l_discount), max(l_discount), count(DISTINCT l_discount)"),
    ("tax", "min(l_tax), max(l_tax), count(DISTINCT l_tax)"),
    ("shipdate", "min(l_shipdate), max(l_shipdate)"),
    ("commitdate", "min(l_commitdate), max(l_commitdate)"),
    ("receiptdate", "min(l_receiptdate), max(l_receiptdate)"),
    ("comment", "min(length(l_comment)), max(length(l_comment)), count(DISTINCT l_comment)"),
    ("receipt < ship", "sum(l_receiptdate <= l_shipdate)"),
]
GROUPS = ["l_returnflag, l_linestatus", "l_shipmode", "l_shipinstruct", "l_linenumber",
          "substr(l_shipdate, 1, 4)"]


def ranges(path):
    con = sqlite3.connect(path)
    for name, sql in RANGES:
        print("%-14s %s" % (name, con.execute("SELECT %s FROM lineitem" % sql).fetchone()))
    for g in GROUPS:
        rows = con.execute("SELECT %s, count(*) FROM lineitem GROUP BY %s ORDER BY %s"
                           % (g, g, g)).fetchall()
        print("%-14s %s" % (g.split(",")[0], rows))
    con.close()


def duck_rows(answer):
    """The rows of a duckdb_query.mjs answer as tuples of Python values: a
    DOUBLE column's numbers as floats (JSON writes 50.0 as 50)."""
    dbl = [t in ("DOUBLE", "FLOAT") for t in answer["types"]]
    return [tuple(float(v) if d and v is not None else v for v, d in zip(r, dbl))
            for r in answer["rows"]]


def selftest(n):
    """The first n rows, by SQLite and by DuckDB: equal, value and type."""
    con = sqlite3.connect(":memory:")
    con.execute(create_sql())
    con.execute("WITH RECURSIVE gen(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM gen WHERE i < %d) "
                "INSERT INTO lineitem %s" % (n, select_sql(n, "sqlite", "gen")))
    order = "ORDER BY l_orderkey, l_linenumber"
    mine = con.execute("SELECT * FROM lineitem " + order).fetchall()
    node = shutil.which("node")
    ddir = os.path.join(HERE, "duckdb")
    if not node or not os.path.isdir(os.path.join(ddir, "node_modules", "@duckdb", "node-api")):
        print("# SKIP selftest: no node or no @duckdb/node-api (make bench-duckdb-setup)")
        return 0
    proc = subprocess.run([node, os.path.join(HERE, "duckdb_query.mjs"), "1"],
                          input="\n".join(json.dumps(x) for x in [
                              {"op": "build", "sql": duckdb_sql(n)},
                              {"op": "query", "sql": "SELECT * FROM lineitem " + order}]) + "\n",
                          capture_output=True, text=True, cwd=ddir)
    if proc.returncode != 0:
        print("# FAIL: duckdb: %s" % proc.stderr[-800:])
        return 1
    theirs = duck_rows(json.loads(proc.stdout.splitlines()[-1]))
    bad = [(a, b) for a, b in zip(mine, theirs)
           if any(type(x) is not type(y) or x != y for x, y in zip(a, b))]
    if len(mine) != len(theirs) or bad:
        print("# FAIL: %d and %d rows, %d differ; first: %r" % (len(mine), len(theirs), len(bad),
                                                                  bad[:1]))
        return 1
    print("# selftest: the first %d rows are identical in SQLite and DuckDB "
          "(every value and type)" % n)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="6e6")
    ap.add_argument("--db", help="the SQLite file to make (or reuse)")
    ap.add_argument("--duckdb-sql", action="store_true", help="print DuckDB's CREATE TABLE")
    ap.add_argument("--ranges", action="store_true", help="print value ranges of --db")
    ap.add_argument("--selftest", type=int, metavar="N")
    ap.add_argument("--jobs", type=int, help="CLI processes making the rows (default: CPUs)")
    args = ap.parse_args()
    n = int(float(args.rows))
    if args.selftest:
        return selftest(args.selftest)
    if args.duckdb_sql:
        print(duckdb_sql(n) + ";")
    if args.db:
        make(args.db, n, jobs=args.jobs)
        if args.ranges:
            ranges(args.db)
    elif not args.duckdb_sql:
        ap.error("give --db FILE, --duckdb-sql or --selftest N")
    return 0


if __name__ == "__main__":
    sys.exit(main())
