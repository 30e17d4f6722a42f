"""test_dask.py — gpuagg.dask over a local Dask cluster (suite `dask`,
issue 21): one exact gpu_query over many SQLite files.

A LocalCluster of 3 worker processes on loopback (each with a nanny),
gpuagg installed for them as a package on PYTHONPATH (gpuagg/__init__.py,
dask.py and libgpuagg.so, as the wheel lays them out).  Eight shard files
of a table with NOCASE keys ('north' vs 'North'), INTEGER, REAL, TEXT and
NULL values in one column (5 vs 5.0 for min/max), an empty file, and a
reference database that holds every file's rows, file after file in rowid
order.

  * equivalence: every answer equals, by repr (value, type, bits), gpu_query
    over the reference (forced onto its parallel path: first row in rowid
    order wins a choice) and the text with gpu_ aggregates there (SQLite's
    own GROUP BY); several texts (Q1-like, several keys, an expression key,
    HAVING, ORDER BY ... LIMIT, ungrouped, min/max over mixed types, no
    matching row, grouped and not), 1 file, and the files as a list or as
    {host: [paths]}, merged 2, 3 or 8 at a time;
  * a worker killed (SIGKILL) while it holds a file's task: a worker plugin
    stops that task's worker at its start until the test kills it; the
    nanny restarts it on a new port and the task runs again (the plugin
    logs two starts); the answer is the same;  with every start held and
    killed, after allowed-failures + 1 deaths the error names the file;
  * errors, each naming what is at fault, and no file task started for the
    text's own error: a text outside gpu_query's grammar; a missing file, a
    directory, a corrupt file, a table without a column the text reads, a
    file that declares a column with another collation; a host with no
    worker; a worker whose gpuagg cannot load;
  * hostile files (issue 36): SQL in a column's declared type, in an index's
    SQL (writable_schema), in a collation name and in a table name, under
    file names with quotes, "?", "#", "%" and a leading "//": each query
    answers as SQLite would or raises an error naming the file, finish()
    refuses forged partials, and no file appears (an ATTACH canary, and
    every file under the test's folder and the working directory);
  * the CLI: python -m gpuagg.dask --scheduler ADDR prints the rows as CSV
    on stdout (a header first) and its progress bar on stderr.

Skipped, with a SKIP line, where dask or distributed is not installed
(.ci/run installs python3-dask and python3-distributed)."""

import csv
import io
import logging
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import quote as urlquote

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gatest import Reporter, LIB  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TMP = tempfile.mkdtemp(prefix="gpuagg_dask_")
SCHEMA = ("CREATE TABLE sales(id INTEGER PRIMARY KEY, region TEXT COLLATE NOCASE, city TEXT, "
          "day TEXT, amount, price REAL, qty INTEGER, disc REAL)")
REGIONS = ["north", "North", "NORTH", "south", "South", "east", "west", None]
CITIES = ["Oslo", "oslo", "Lima", "Pune", "Kyiv", ""]


def install_package(dest, lib):
    """gpuagg as the wheel lays it out, for the workers (PYTHONPATH)."""
    pkg = os.path.join(dest, "gpuagg")
    os.makedirs(pkg)
    src = os.path.join(ROOT, "pkg", "python", "gpuagg")
    text = open(os.path.join(src, "__init__.py.in")).read()
    text = text.replace("@VERSION@", "0+test").replace("@KIND@", "test build")
    open(os.path.join(pkg, "__init__.py"), "w").write(text)
    shutil.copy(os.path.join(src, "dask.py"), pkg)
    if lib:
        shutil.copy(lib + ".so", os.path.join(pkg, "libgpuagg.so"))
    return dest


def fill(con, n, seed):
    import random
    r = random.Random(seed)
    rows = []
    for i in range(n):
        amount = r.choice([r.randint(-10**6, 10**6), r.random() * 1e3, None, "12", "x", 5, 5.0,
                           2**62, -2**62, 0.1, 1e100, -1e100])
        rows.append((r.choice(REGIONS), r.choice(CITIES), "2026-%02d-%02d" % (r.randint(1, 12), r.randint(1, 28)),
                     amount, r.random() * 100, r.randint(1, 50), r.choice([0.0, 0.05, 0.1])))
    con.executemany("INSERT INTO sales(region, city, day, amount, price, qty, disc) VALUES (?,?,?,?,?,?,?)", rows)


def make_files():
    sizes = [300, 2000, 0, 40, 20000, 700, 1, 5000]
    files = []
    for i, n in enumerate(sizes):
        path = os.path.join(TMP, "shard %d.db" % i)  # a space: the URI must escape it
        con = sqlite3.connect(path)
        if i % 2:
            con.execute("PRAGMA journal_mode=wal")
        con.execute(SCHEMA)
        fill(con, n, 1000 + i)
        con.commit()
        con.close()
        files.append(path)
    ref = sqlite3.connect(os.path.join(TMP, "reference.db"), isolation_level=None)
    ref.enable_load_extension(True)
    ref.load_extension(LIB)
    ref.execute(SCHEMA.replace("id INTEGER PRIMARY KEY, ", "id INTEGER, "))
    for f in files:
        ref.execute("ATTACH ? AS s", (f,))
        ref.execute("INSERT INTO main.sales SELECT * FROM s.sales ORDER BY rowid")
        ref.execute("DETACH s")
    ref.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    return files, ref


QUERIES = {
    "q1": ("SELECT region, city, sum(qty) AS sum_qty, sum(price) AS sum_base, "
           "sum(price * (1 - disc)) AS sum_disc, avg(qty), avg(price), avg(disc), count(*) "
           "FROM sales WHERE day <= ?1 GROUP BY region, city ORDER BY region, city", ("2026-09-02",)),
    "issue": ("SELECT region, sum(amount) AS revenue, avg(price), count(*) FROM sales "
              "WHERE day >= ?1 GROUP BY region ORDER BY revenue DESC LIMIT 10", ("2026-01-01",)),
    "keys_expr": ("SELECT region, substr(day, 1, 7) AS month, total(amount), max(amount), min(amount), "
                  "count(amount) FROM sales GROUP BY region, month ORDER BY region, month", ()),
    "having": ("SELECT city, count(*) AS n, gpu_sum(qty), min(price) FROM sales GROUP BY city "
               "HAVING count(*) > ?1 ORDER BY n DESC, city", (100,)),
    "limit": ("SELECT region, max(amount) AS m, min(amount) FROM sales GROUP BY region "
              "ORDER BY region LIMIT 2 OFFSET 1", ()),
    "ungrouped": ("SELECT sum(amount), total(amount), avg(price), max(amount), min(amount), count(*), "
                  "count(amount) FROM sales", ()),
    "none_grouped": ("SELECT region, sum(qty) FROM sales WHERE day > '2099' GROUP BY region", ()),
    "none_ungrouped": ("SELECT sum(qty), avg(price), max(city), count(*) FROM sales WHERE day > ?1",
                       ("2099",)),
    "int_sum": ("SELECT city, sum(qty * 1000003), max(qty) FROM sales GROUP BY city ORDER BY city", ()),
    # issue 37: date and time functions over columns (the monthly trend,
    # weekday/weekend), run in every file's task at the shipped time
    "monthly": ("SELECT strftime('%Y-%m', day) AS month, sum(qty), count(*), max(price) FROM sales "
                "GROUP BY month ORDER BY month", ()),
    "weekend": ("SELECT CASE WHEN strftime('%w', day) IN ('0', '6') THEN 'weekend' ELSE 'weekday' END AS k, "
                "region, total(price), count(*) FROM sales WHERE julianday(day) > julianday(?1) "
                "GROUP BY k, region ORDER BY k, region", ("2026-03-01",)),
    # issue 37: the partials carry DISTINCT sets (5 and 5.0 in amount: the
    # earlier file's first decides typeof), FILTER
    "distinct": ("SELECT region, count(DISTINCT city), sum(DISTINCT amount), typeof(sum(DISTINCT amount)), "
                 "count(*) FILTER (WHERE qty > ?1), avg(DISTINCT price) FILTER (WHERE disc > 0) FROM sales "
                 "GROUP BY region ORDER BY region", (25,)),
    # issue 39: the partials carry Σx² (qpartial.h rule 7): the exact
    # variance's bits, files merged in any grouping
    "variance": ("SELECT region, gpu_stddev(amount), gpu_var_pop(price), gpu_stddev_pop(qty) FILTER "
                 "(WHERE disc > 0), gpu_variance(qty * 1000003) FROM sales GROUP BY region ORDER BY region", ()),
    "variance_ungrouped": ("SELECT gpu_var_samp(amount), gpu_stddev(price), count(*) FROM sales", ()),
}


def gpu_text(sql):
    return re.sub(r"\b(sum|total|avg|min|max)\(", r"gpu_\1(", sql)


def reference(ref, sql, params):
    """gpu_query over the reference (parallel: first row wins), and the text
    with gpu_ aggregates there (SQLite's GROUP BY)."""
    ref.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % ("'" + sql.replace("'", "''") + "'"))
    try:
        a = ref.execute("SELECT * FROM temp.q(%s)" % ",".join("?" * len(params)), params).fetchall()
    finally:
        ref.execute("DROP TABLE temp.q")
    b = ref.execute(gpu_text(sql), params).fetchall()
    return a, b


def expect_error(rep, name, fn, pattern):
    try:
        got = fn()
    except Exception as e:  # noqa: BLE001
        ok = re.search(pattern, str(e)) is not None
        rep.check(name, ok, "%s: %s (want /%s/)" % (type(e).__name__, e, pattern))
        return str(e)
    rep.check(name, False, "no error; got %r" % (got,))
    return ""


def q_ident(name):
    return '"' + name.replace('"', '""') + '"'


def hostile_file(path, table, coltype, rows, index_sql=None, collation=None):
    """A file of table(k TEXT, v INTEGER, note coltype, w TEXT); index_sql
    appended to an index's SQL and collation given to w, both through
    writable_schema (the file still passes integrity_check)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TABLE %s(k TEXT, v INTEGER, note %s, w TEXT)" % (q_ident(table), q_ident(coltype)))
    con.execute("CREATE INDEX ix ON %s(k, v DESC)" % q_ident(table))
    con.executemany("INSERT INTO %s VALUES (?, ?, ?, ?)" % q_ident(table), rows)
    con.execute("PRAGMA writable_schema = ON")
    if index_sql:
        con.execute("UPDATE sqlite_schema SET sql = sql || ? WHERE name = 'ix'", (index_sql,))
    if collation:
        con.execute("UPDATE sqlite_schema SET sql = replace(sql, 'w TEXT', 'w TEXT COLLATE ' || ?) "
                    "WHERE name = ?", (q_ident(collation), table))
    con.execute("PRAGMA writable_schema = OFF")
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    assert ok == "ok", ok
    return path


def tree(*dirs):
    """Every file under dirs, but the worker plugin's log (TMP/plugin)."""
    skip = os.path.join(TMP, "plugin") + os.sep
    return sorted(p for d in dirs for r, _, fs in os.walk(d) for p in (os.path.join(r, f) for f in fs)
                  if not p.startswith(skip))


def dates_checks(rep, client, gd, files, starts):
    """Issue 37: the statement time shipped to every task (rows holding
    'now' in three files read one time: the now= given, or the client's at
    the start); a text that cannot make a partial ('now' written in it: the
    caller's own part would read another time; 'localtime', which follows
    each process's TZ) fails in the check on the first file, before any
    file task starts, locally and on the file's host, and the check returns
    the reason (no exception in a worker's log)."""
    import datetime
    paths = []
    for i in range(3):
        path = os.path.join(TMP, "now %d.db" % i)
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t(g INTEGER, d TEXT)")
        con.executemany("INSERT INTO t VALUES (?, ?)", [(k % 5, ["now", "NOW", "2024-01-02"][k % 3])
                                                        for k in range(300 + 100 * i)])
        con.commit()
        con.close()
        paths.append(path)
    text = ("SELECT g, min(julianday(d)), max(julianday(d)), min(strftime('%s', d)), count(*) FROM t "
            "WHERE d <> '2024-01-02' GROUP BY g ORDER BY g")
    at = datetime.datetime(2024, 5, 6, 7, 8, 9, 250000)
    rows = gd.query(client, paths, text, now=at, split_every=2)
    want = sqlite3.connect(":memory:").execute("SELECT julianday('2024-05-06 07:08:09.250')").fetchone()[0]
    rep.check("now_shipped", len(rows) == 5 and all(r[1] == r[2] == want and r[3] == "1714979289"
                                                    for r in rows), repr(rows))
    ref = sqlite3.connect(":memory:")
    before = ref.execute("SELECT julianday('now')").fetchone()[0]
    rows = gd.query(client, {"127.0.0.1": paths}, text, split_every=3)
    after = ref.execute("SELECT julianday('now')").fetchone()[0]
    times = {r[1] for r in rows} | {r[2] for r in rows}
    rep.check("now_client_time", len(rows) == 5 and len(times) == 1 and before <= times.pop() <= after,
              "%r not one time in [%r, %r]" % (rows, before, after))
    for label, sql, pattern in (
            ("now_written", "SELECT region, count(*) FROM sales WHERE day < date('now') GROUP BY region",
             r"cannot run on .*gpu_query_partial: .*date with 'now' written"),
            ("localtime", "SELECT date(day, 'localtime') AS k, count(*) FROM sales GROUP BY k",
             r"cannot run on .*gpu_query_partial: .*date\(\) with 'localtime' or 'utc'"),
            ("modifier_column", "SELECT date(day, city) AS k, count(*) FROM sales GROUP BY k",
             r"gpu_query_partial: .*with a modifier that is not a literal")):
        for how, fl in (("local", files), ("host", {"127.0.0.1": files})):
            seen = len(starts())
            expect_error(rep, "precheck_%s_%s" % (label, how), lambda: gd.query(client, fl, sql), pattern)
            rep.check("precheck_%s_%s_no_task" % (label, how), len(starts()) == seen,
                      "file tasks started: %r" % starts()[seen:])
    # the check itself returns the reason, whether it runs here or on a worker
    got = client.submit(gd._check_text, files[0], "SELECT date(day, 'utc') AS k FROM sales GROUP BY k",
                        (), False, None, gd._now_ms(None), pure=False).result()
    rep.check("precheck_returns_reason", isinstance(got, str) and "'localtime' or 'utc'" in got, repr(got))


def spelled_types(rep, client, gd):
    """Columns declared as analysts' tools declare them (INT, BIGINT,
    VARCHAR(10), DOUBLE, DECIMAL(10,2), UNSIGNED BIG INT, none): the client
    declares each as the file spells it, so the finish's column check
    (which compares declared types) passes and the answer is SQLite's."""
    sd = os.path.join(TMP, "spelled")
    os.makedirs(sd)
    files = []
    for i in range(2):
        path = os.path.join(sd, "s%d.db" % i)
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("CREATE TABLE m(k VARCHAR(10), a INT, b BIGINT, c DOUBLE, d DECIMAL(10,2), "
                    "e UNSIGNED BIG INT, f, g double precision)")
        con.executemany("INSERT INTO m VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [("k%d" % (j % 3), j, j * 1000, j * 0.5, j / 4, j, j % 2, j * 0.25)
                         for j in range(i * 50, i * 50 + 50)])
        con.close()
        files.append(path)
    sql = ("SELECT k, sum(a), sum(b), sum(c), sum(d), sum(e), sum(f), sum(g), count(*) "
           "FROM m GROUP BY k ORDER BY k")
    ref = sqlite3.connect(":memory:")
    ref.enable_load_extension(True)
    ref.load_extension(LIB)
    for i, f in enumerate(files):
        ref.execute("ATTACH ? AS s%d" % i, (f,))
    union = " UNION ALL ".join("SELECT * FROM s%d.m" % i for i in range(len(files)))
    want = ref.execute(gpu_text(sql).replace("FROM m", "FROM (%s)" % union)).fetchall()
    try:
        got = gd.query(client, files, sql)
    except Exception as e:  # noqa: BLE001
        got = e
    rep.check("spelled_types_answer", repr(got) == repr(want), "got %r\nwant %r" % (got, want))


def hostile(rep, client, gd):
    hd = os.path.join(TMP, "hostile's \"dir\"")
    os.makedirs(hd)
    canary = os.path.join(TMP, "canary.db")
    attach = "ATTACH %s AS p; CREATE TABLE p.owned(x); --" % ("'" + canary.replace("'", "''") + "'")
    evil_type = "INT); " + attach
    rows = [[("north", 1, 1, "a"), ("south", 2, 2, "b"), ("north", 3, 3, "c")],
            [("south", 10, 1, "a")], [("east", 100, 1, "a"), ("north", 1000, 1, "b")], [("west", 7, 7, "w")]]
    names = ["it's \"q\".db", "q?x=1&mode=rwc.db", "h#frag.db", "%41 pct.db"]
    files = [hostile_file(os.path.join(hd, n), "sales", evil_type, r,
                          index_sql="; " + attach if i == 1 else None)
             for i, (n, r) in enumerate(zip(names, rows))]
    files[3] = "/" + files[3]  # "//tmp/...": the same file, no URI authority
    want = {}
    for r in rows:
        for k, v, _, _ in r:
            n, c = want.get(k, (0, 0))
            want[k] = (n + v, c + 1)
    want = [(k,) + want[k] for k in sorted(want)]
    sql = "SELECT k, sum(v), count(*) FROM sales GROUP BY k ORDER BY k"
    cwd = os.getcwd()
    before = tree(TMP) + sorted(os.listdir(cwd))
    try:
        got = gd.query(client, files, sql)
    except Exception as e:  # noqa: BLE001
        got = e
    rep.check("hostile_type_index_names", got == want, "got %r\nwant %r" % (got, want))
    got = None
    try:
        got = gd.query(client, {"127.0.0.1": files[:3]}, sql + " LIMIT 2", split_every=2)
    except Exception as e:  # noqa: BLE001
        got = e
    want3 = [("east", 100, 1), ("north", 1004, 3)]
    rep.check("hostile_by_host", got == want3, "got %r" % (got,))
    # a table name carrying SQL, read under its quoted name
    tab = "sales\"); " + attach
    tfile = hostile_file(os.path.join(hd, "table#?.db"), tab, "TEXT", rows[0])
    try:
        got = gd.query(client, [tfile, "/" + tfile],
                       "SELECT k, sum(v), count(*) FROM %s GROUP BY k ORDER BY k" % q_ident(tab))
    except Exception as e:  # noqa: BLE001
        got = e
    rep.check("hostile_table_name", got == [("north", 8, 4), ("south", 4, 2)], "got %r" % (got,))
    # a collation name carrying SQL, on a column the text does not read:
    # that column is left out of the partial (its name never runs), and
    # the answer is SQLite's
    cfile = hostile_file(os.path.join(hd, "coll 'x'#.db"), "sales", evil_type, rows[1],
                         collation="x\"); " + attach)
    wantc = {}
    for k, v, _, _ in rows[0] + rows[1] + rows[1]:
        n, c = wantc.get(k, (0, 0))
        wantc[k] = (n + v, c + 1)
    wantc = [(k,) + wantc[k] for k in sorted(wantc)]
    try:
        got = gd.query(client, files[:2] + ["//" + cfile], sql)
    except Exception as e:  # noqa: BLE001
        got = e
    rep.check("hostile_collation", got == wantc, "got %r\nwant %r" % (got, wantc))
    expect_error(rep, "hostile_missing_slashes",
                 lambda: gd.query(client, files[:1] + ["//" + hd + "/none?.db"], sql),
                 "^gpuagg.dask: //%s/none\\?\\.db: no such file" % re.escape(hd))
    # the client's finish, given forged partials: what a header holds never
    # runs; a damaged partial is an error naming what it covers
    con = sqlite3.connect("file:%s?mode=ro" % urlquote(files[0]), uri=True)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    blob = con.execute("SELECT gpu_query_partial(?)", (sql,)).fetchone()[0]
    con.close()
    rows0, _ = gd.finish(blob, sql)
    rep.check("hostile_finish_direct", rows0 == [("north", 4, 2), ("south", 2, 1)], repr(rows0))
    good = b'\x07\x00\x00\x00INTEGER'
    forged = blob.replace(good, len(evil_type).to_bytes(4, "little") + evil_type.encode(), 1)
    expect_error(rep, "hostile_finish_forged_type", lambda: gd.finish(forged, sql, (), "file F"),
                 r"^gpuagg\.dask: file F: gpu_query_partial_info: argument 1: a damaged partial "
                 r"\(a column's declared type is no type name\)")
    after = tree(TMP) + sorted(os.listdir(cwd))
    made = [f for f in after if f not in before and not f.startswith(hd + os.sep)]
    rep.check("hostile_no_file_written", not os.path.exists(canary) and made == [] and
              tree(hd) == sorted(files[:3] + [files[3][1:], tfile, cfile]),
              "canary %s; new files %r; in %s: %r" % (os.path.exists(canary), made, hd, tree(hd)))


def star_join(rep, client, gd, starts):
    """Issue 38, 3.4: a star join over files that each hold their own
    dimensions.  The shape: the rows equal those of the text over one
    database whose fact holds every file's fact rows, file after file,
    each row joined to the dimension rows of its own file (the reference:
    each file's join, UNION ALL in file order, grouped once).  The
    dimensions differ between files (rows, attributes, a duplicate key);
    one is WITHOUT ROWID, one has a NOCASE key, one a declared type and an
    index carrying SQL and a column of a collation named with SQL (never
    read).  A join text that cannot make a partial (no fact hint; the fact
    not first with LEFT JOIN) fails on the first file before any task."""
    import random
    jd = os.path.join(TMP, "star's \"join\"")
    os.makedirs(jd)
    canary = os.path.join(TMP, "star_canary.db")
    attach = "ATTACH %s AS p; CREATE TABLE p.owned(x); --" % ("'" + canary.replace("'", "''") + "'")
    ddl = ["CREATE TABLE lineorder(lo_custkey INTEGER, lo_partkey INTEGER, lo_orderdate INTEGER, "
           "lo_region TEXT, lo_revenue INTEGER, lo_discount REAL)",
           "CREATE TABLE customer(c_custkey INTEGER PRIMARY KEY, c_nation TEXT, c_city %s, c_note TEXT)"
           % q_ident("TEXT); " + attach),
           "CREATE INDEX c_ix ON customer(c_nation, c_city)",
           "CREATE TABLE part(p_partkey INTEGER, p_brand TEXT COLLATE NOCASE, p_size INTEGER)",
           "CREATE TABLE dwdate(d_datekey INTEGER PRIMARY KEY, d_year INTEGER, d_month TEXT) WITHOUT ROWID",
           "CREATE TABLE region(r_name TEXT COLLATE NOCASE PRIMARY KEY, r_zone TEXT)"]
    r = random.Random(38)
    paths = []
    for i, nf in enumerate([400, 0, 1500, 35, 900]):
        path = os.path.join(jd, "star %d?.db" % i)
        con = sqlite3.connect(path, isolation_level=None)
        for st in ddl:
            con.execute(st)
        con.execute("BEGIN")
        for k in range(1, 31):
            if r.random() < 0.85:
                con.execute("INSERT INTO customer VALUES (?, ?, ?, ?)",
                            (k, r.choice(["CHINA", "china", "PERU", None]), "c%d" % (k % (4 + i)), "n"))
        for k in range(1, 21):
            for _ in range(2 if r.random() < 0.1 else 1):  # a duplicate key: a fact row joins both
                con.execute("INSERT INTO part VALUES (?, ?, ?)", (k, r.choice(["MFGR#1", "mfgr#1", "MFGR#2"]),
                                                                   r.randint(1, 50)))
        for k in range(19920101, 19920131):
            con.execute("INSERT INTO dwdate VALUES (?, ?, ?)", (k, 1992 + i % 2, r.choice(["Jan", "Feb"])))
        for name in ["ASIA", "america", "EUROPE"]:
            con.execute("INSERT INTO region VALUES (?, ?)", (name, r.choice(["z1", "z2"])))
        for _ in range(nf):
            con.execute("INSERT INTO lineorder VALUES (?, ?, ?, ?, ?, ?)",
                        (r.randint(1, 33), r.randint(1, 22), r.randint(19920101, 19920133),
                         r.choice(["asia", "America", "EUROPE", "africa", None]), r.randint(-10**6, 10**9),
                         r.choice([0.0, 0.05, 0.1, None])))
        con.execute("COMMIT")
        con.execute("PRAGMA writable_schema = ON")
        con.execute("UPDATE sqlite_schema SET sql = sql || '; ' || ? WHERE name = 'c_ix'", (attach,))
        con.execute("UPDATE sqlite_schema SET sql = replace(sql, 'c_note TEXT', 'c_note TEXT COLLATE ' || ?) "
                    "WHERE name = 'customer'", (q_ident("x\"); " + attach),))
        con.execute("PRAGMA writable_schema = OFF")
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()
        paths.append(path)
    # (text, parameters, each file's joined rows, those rows grouped)
    texts = [
        # SSB Q2.1's shape: the fact and three dimensions, comma joins, a
        # filter on a NOCASE column (p_brand), a duplicate part key
        ("SELECT /* gpuagg_fact(lineorder) */ d_year, p_size % 5 AS sz, sum(lo_revenue), count(*) "
         "FROM lineorder, dwdate, part, customer WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey "
         "AND lo_custkey = c_custkey AND c_nation = ?1 AND p_brand = 'mfgr#1' GROUP BY d_year, sz "
         "ORDER BY d_year, sz", ("CHINA",),
         "SELECT d_year, p_size % 5 AS sz, lo_revenue FROM {s}.lineorder, {s}.dwdate, {s}.part, {s}.customer "
         "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_custkey = c_custkey "
         "AND c_nation = ?1 AND p_brand = 'mfgr#1'",
         "SELECT d_year, sz, gpu_sum(lo_revenue), count(*) FROM ({u}) GROUP BY d_year, sz ORDER BY d_year, sz"),
        # JOIN ... ON, a LEFT JOIN of a NOCASE-keyed dimension, avg, max
        ("SELECT /* gpuagg_fact(lineorder) */ c_city, r_zone, avg(lo_discount), max(lo_revenue), count(*) "
         "FROM lineorder JOIN customer ON lo_custkey = c_custkey LEFT JOIN region ON region.r_name = lo_region "
         "GROUP BY c_city, r_zone ORDER BY c_city, r_zone", (),
         "SELECT c_city, r_zone, lo_discount, lo_revenue FROM {s}.lineorder JOIN {s}.customer "
         "ON lo_custkey = c_custkey LEFT JOIN {s}.region ON region.r_name = lo_region",
         "SELECT c_city, r_zone, gpu_avg(lo_discount), gpu_max(lo_revenue), count(*) FROM ({u}) "
         "GROUP BY c_city, r_zone ORDER BY c_city, r_zone"),
    ]
    ref = sqlite3.connect(":memory:")
    ref.enable_load_extension(True)
    ref.load_extension(LIB)
    for i, pth in enumerate(paths):
        ref.execute("ATTACH ? AS s%d" % i, (pth,))
    wants = []
    for sql, params, inner, outer in texts:
        union = " UNION ALL ".join(inner.format(s="s%d" % i) for i in range(len(paths)))
        wants.append(ref.execute(outer.format(u=union), params).fetchall())
    before = tree(TMP)
    for k, (sql, params, _, _) in enumerate(texts):
        for how, fl, split in (("list", paths, 2), ("hosts", {"127.0.0.1": paths}, 8)):
            try:
                got = gd.query(client, fl, sql, params, split_every=split)
            except Exception as e:  # noqa: BLE001
                got = e
            rep.check("star_join_%d_%s" % (k, how), repr(got) == repr(wants[k]) and len(wants[k]) > 2,
                      "got  %r\nwant %r" % (got, wants[k][:6]))
    made = [f for f in tree(TMP) if f not in before]
    rep.check("star_join_no_file_written", not os.path.exists(canary) and made == [], repr(made))
    # the checks on the first file, before any file task
    for label, sql, pattern in (
            ("no_hint", "SELECT d_year, sum(lo_revenue) FROM lineorder JOIN dwdate ON lo_orderdate = d_datekey "
             "GROUP BY d_year", r"cannot run on .*gpu_query_partial: a join's partial needs its fact table named"),
            ("fact_not_first", "SELECT /* gpuagg_fact(lineorder) */ d_year, sum(lo_revenue) FROM dwdate "
             "LEFT JOIN lineorder ON lo_orderdate = d_datekey GROUP BY d_year", r"^gpu_query: .*LEFT"),
            ("serial_join", "SELECT /* gpuagg_fact(lineorder) */ d_year, sum(lo_revenue) FROM dwdate JOIN lineorder "
             "ON lo_orderdate = d_datekey LEFT JOIN part ON lo_partkey = p_partkey GROUP BY d_year",
             r"cannot run on .*gpu_query_partial: the join has LEFT JOIN or USING, whose meaning follows the "
             r"order written, and the fact table is not written first")):
        seen = len(starts())
        expect_error(rep, "star_join_precheck_" + label, lambda: gd.query(client, paths, sql), pattern)
        rep.check("star_join_precheck_%s_no_task" % label, len(starts()) == seen,
                  "file tasks started: %r" % starts()[seen:])
    ref.close()


class DaskReporter(Reporter):
    def finish_now(self):
        """Report and leave at once: a stuck cluster would hold the exit."""
        print("RESULT %s: %d passed, %d failed, %d skipped" % (self.suite, self.passed, self.failed,
                                                             self.skipped))
        sys.stdout.flush()
        os._exit(1)


def main():
    rep = DaskReporter("dask")
    try:
        import dask
        from distributed import Client, LocalCluster, WorkerPlugin
    except ImportError as e:
        rep.skip("dask", "dask or distributed is not installed (apt-get install python3-dask "
                 "python3-distributed): %s" % e)
        rep.finish()
    # under make test-asan the workers and the CLI are Python processes with
    # the ASan runtime preloaded: the interpreter's own allocations at exit
    # are no leak of ours (query_errors and query_partial check gpuagg's)
    if "LD_PRELOAD" in os.environ:
        os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    pkgdir = install_package(os.path.join(TMP, "site"), LIB)
    os.environ["PYTHONPATH"] = pkgdir + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, pkgdir)
    import gpuagg.dask as gd

    class Hold(WorkerPlugin):
        """Logs each start of a task whose key holds `sub`; holds the first
        `holds` of them (sleeps in the worker's event loop until killed),
        writing the worker's pid where the test waits for it."""

        def __init__(self, d, sub, holds, gen):
            self.d, self.sub, self.holds, self.gen = d, sub, holds, gen

        def transition(self, key, start, finish, **kw):
            if finish != "executing" or self.sub not in str(key):
                return
            try:  # a worker restarted mid-registration may hold an old one
                with open(os.path.join(self.d, "generation")) as f:
                    if f.read() != self.gen:
                        return
            except OSError:
                return
            log = os.path.join(self.d, "starts")
            with open(log, "a") as f:
                f.write("%d %s\n" % (os.getpid(), key))
            n = sum(1 for _ in open(log))
            if n <= self.holds:
                with open(os.path.join(self.d, "held%d" % n), "w") as f:
                    f.write(str(os.getpid()))
                time.sleep(300)

    files, ref = make_files()
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    cluster = LocalCluster(n_workers=3, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=logging.CRITICAL)
    client = Client(cluster)
    plug = os.path.join(TMP, "plugin")
    os.makedirs(plug)

    def starts():
        p = os.path.join(plug, "starts")
        return open(p).read().splitlines() if os.path.exists(p) else []

    gens = []

    def reset_plugin(sub, holds):
        for f in os.listdir(plug):
            os.remove(os.path.join(plug, f))
        gens.append("%d" % len(gens))
        with open(os.path.join(plug, "generation"), "w") as f:
            f.write(gens[-1])
        client.register_worker_plugin(Hold(plug, sub, holds, gens[-1]), name="hold")

    try:
        # ---- equivalence
        for name, (sql, params) in QUERIES.items():
            want, plain = reference(ref, sql, params)
            rep.check("%s_reference_self" % name, repr(want) == repr(plain),
                      "gpu_query %r\n  gpu_ text %r" % (want[:4], plain[:4]))
            for how, fl, split in (("list", files, 8), ("hosts", {"127.0.0.1": files}, 2),
                                   ("list3", files, 3)):
                got = gd.query(client, fl, sql, params, split_every=split)
                rep.check("%s_%s" % (name, how), repr(got) == repr(want),
                          "got  %r\nwant %r" % (got[:6], want[:6]))
        ref1 = sqlite3.connect(os.path.join(TMP, "one.db"), isolation_level=None)
        ref1.enable_load_extension(True)
        ref1.load_extension(LIB)
        ref1.execute(SCHEMA)
        ref1.execute("ATTACH ? AS s", (files[1],))
        ref1.execute("INSERT INTO main.sales SELECT * FROM s.sales ORDER BY rowid")
        ref1.execute("SELECT gpuagg_config('scan_min_rows', 0)")
        for name in ("q1", "ungrouped", "keys_expr"):
            sql, params = QUERIES[name]
            want, _ = reference(ref1, sql, params)
            got = gd.query(client, [files[1]], sql, params)
            rep.check("one_file_%s" % name, repr(got) == repr(want), "got %r\nwant %r" % (got[:4], want[:4]))
        sql, params = QUERIES["q1"]
        want, _ = reference(ref, sql, params)
        try:
            import pandas
            df = gd.query(client, files, sql, params, as_pandas=True)
            rep.check("as_pandas", isinstance(df, pandas.DataFrame) and len(df) == len(want) and
                      list(df.columns)[:3] == ["region", "city", "sum_qty"] and
                      [tuple(x) for x in df.itertuples(index=False)][0][:3] == want[0][:3], repr(df.head()))
        except ImportError:
            rep.skip("as_pandas", "pandas is not installed")

        # ---- a worker killed while it holds file 4's task (pinned by host)
        reset_plugin("gpuagg-file-4-", 1)
        res = {}

        def run_query(fl):
            try:
                res["rows"] = gd.query(client, fl, sql, params)
            except Exception as e:  # noqa: BLE001
                res["error"] = e
        th = threading.Thread(target=run_query, args=({"127.0.0.1": files},), daemon=True)
        th.start()
        held = os.path.join(plug, "held1")
        deadline = time.monotonic() + 120
        while not os.path.exists(held) and th.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if os.path.exists(held):
            time.sleep(0.05)  # the pid is written
            os.kill(int(open(held).read()), signal.SIGKILL)
        th.join(180)
        if th.is_alive():  # the task waits for good (pinned to a dead worker's address)
            rep.check("kill_once_same_answer", False, "the query still runs after 180 s")
            rep.finish_now()
        rep.check("kill_once_same_answer", repr(res.get("rows")) == repr(want),
                  "error %r rows %r" % (res.get("error"), (res.get("rows") or [])[:3]))
        rep.check("kill_once_ran_twice", len(starts()) == 2, "task starts: %r" % starts())

        # every start held and killed: allowed-failures (1) + 1 deaths
        client.wait_for_workers(3, timeout=120)
        reset_plugin("gpuagg-file-6-", 10)
        res.clear()
        th = threading.Thread(target=run_query, args=(files,), daemon=True)
        th.start()
        killed = 0
        deadline = time.monotonic() + 180
        while th.is_alive() and time.monotonic() < deadline:
            h = os.path.join(plug, "held%d" % (killed + 1))
            if os.path.exists(h):
                time.sleep(0.05)
                os.kill(int(open(h).read()), signal.SIGKILL)
                killed += 1
            time.sleep(0.02)
        th.join(60)
        if th.is_alive():
            rep.check("killed_too_often", False, "the query still runs after 240 s")
            rep.finish_now()
        err = str(res.get("error"))
        rep.check("killed_too_often", isinstance(res.get("error"), gd.QueryError) and
                  files[6] in err and "allowed-failures" in err and killed == 2,
                  "killed %d, error %r, rows %r" % (killed, res.get("error"), res.get("rows")))
        client.unregister_worker_plugin("hold")
        # the cluster is whole again: the nannies restarted their workers
        client.wait_for_workers(3, timeout=120)

        # ---- errors
        reset_plugin("gpuagg-file-", 0)
        expect_error(rep, "error_grammar", lambda: gd.query(client, files, "SELECT region, amount FROM sales "
                                                            "GROUP BY region"), r"^gpu_query: ")
        expect_error(rep, "error_window", lambda: gd.query(
            client, files, "SELECT sum(qty) OVER () FROM sales"), r"^gpu_query: .*window")
        rep.check("error_grammar_no_task", starts() == [], "file tasks started: %r" % starts())
        dates_checks(rep, client, gd, files, starts)
        missing = os.path.join(TMP, "missing.db")
        expect_error(rep, "error_missing", lambda: gd.query(client, files + [missing], sql, params),
                     re.escape(missing) + ".*no such file")
        adir = os.path.join(TMP, "a directory.db")
        os.makedirs(adir)
        expect_error(rep, "error_directory", lambda: gd.query(client, files[:2] + [adir], sql, params),
                     re.escape(adir) + ": (unable to open|disk I/O error)")
        corrupt = os.path.join(TMP, "corrupt.db")
        with open(corrupt, "wb") as f:
            f.write(b"this is not a database" * 400)
        expect_error(rep, "error_corrupt", lambda: gd.query(client, files[:3] + [corrupt], sql, params),
                     re.escape(corrupt) + ": (gpu_query_partial: )?file is not a database")
        nocol = os.path.join(TMP, "nocol.db")
        con = sqlite3.connect(nocol)
        con.execute("CREATE TABLE sales(region, city, day, price, qty)")
        con.commit()
        con.close()
        expect_error(rep, "error_no_column", lambda: gd.query(client, files[:3] + [nocol], sql, params),
                     re.escape(nocol) + ": gpu_query_partial: no such column: disc")
        other = os.path.join(TMP, "other_collation.db")
        con = sqlite3.connect(other)
        con.execute(SCHEMA.replace("COLLATE NOCASE", ""))
        fill(con, 50, 7)
        con.commit()
        con.close()
        expect_error(rep, "error_collation", lambda: gd.query(client, files[:2] + [other], sql, params),
                     re.escape(other) + '.*declares column region as "TEXT" COLLATE BINARY, an earlier one as '
                     '"TEXT" COLLATE NOCASE')
        retyped = os.path.join(TMP, "other_type.db")
        con = sqlite3.connect(retyped)
        con.execute(SCHEMA.replace("price REAL", "price TEXT"))
        fill(con, 50, 8)
        con.commit()
        con.close()
        expect_error(rep, "error_column_type", lambda: gd.query(client, files[:2] + [retyped], sql, params),
                     re.escape(retyped) + '.*declares column price as "TEXT" COLLATE BINARY, an earlier one as '
                     '"REAL" COLLATE BINARY')
        expect_error(rep, "error_no_files", lambda: gd.query(client, [], sql, params), "no files")
        expect_error(rep, "error_host", lambda: gd.query(client, {"10.255.255.1": files[:1]}, sql, params),
                     "no worker runs on host 10.255.255.1.*" + re.escape(files[0]))
        # a worker whose gpuagg cannot load: its package lacks libgpuagg.so;
        # and one without the package at all (the probe cannot even unpickle)
        broken = install_package(os.path.join(TMP, "broken"), None)
        empty = os.path.join(TMP, "empty")
        os.makedirs(empty)
        for what, path, cause in (("no_library", broken, "OperationalError"),
                                  ("no_package", empty, "ModuleNotFoundError")):
            env = dict(os.environ, PYTHONPATH=path)
            w = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                  "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1", "--name", "broken"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                client.wait_for_workers(4, timeout=120)
                waddr = [a for a, i in client.scheduler_info()["workers"].items() if i.get("name") == "broken"]
                expect_error(rep, "error_worker_gpuagg_" + what, lambda: gd.query(client, files, sql, params),
                             "worker %s cannot load gpuagg \\(.*%s" % (re.escape(waddr[0] if waddr else "?"), cause))
            finally:
                w.kill()
                w.wait()
            deadline = time.monotonic() + 120
            while len(client.scheduler_info()["workers"]) > 3 and time.monotonic() < deadline:
                time.sleep(0.1)

        # ---- hostile files (issue 36): SQL in a column's type, an index's
        # SQL, a collation name and a table name; file names with quotes,
        # "?", "#", "%" and a leading "//".  Each query answers right or
        # raises an error naming the file, and no file appears anywhere
        hostile(rep, client, gd)
        spelled_types(rep, client, gd)
        star_join(rep, client, gd, starts)

        # ---- the command line
        p = subprocess.run([sys.executable, "-m", "gpuagg.dask", "--scheduler", cluster.scheduler_address,
                            "-p", '"2026-09-02"', sql] + files, capture_output=True, text=True, timeout=300)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        exp = [[("" if v is None else repr(v) if isinstance(v, float) else str(v)) for v in r] for r in want]
        rep.check("cli_csv", p.returncode == 0 and rows[:1] == [["region", "city", "sum_qty", "sum_base",
                                                                  "sum_disc", "avg(qty)", "avg(price)",
                                                                  "avg(disc)", "count(*)"]]
                  and rows[1:] == exp, "rc %d\nout %r\nerr %r" % (p.returncode, p.stdout[:400], p.stderr[-400:]))
        rep.check("cli_progress_on_stderr", "[" in p.stderr and "#" in p.stderr or "100%" in p.stderr,
                  "stderr %r" % p.stderr[-300:])
        p = subprocess.run([sys.executable, "-m", "gpuagg.dask", "--scheduler", cluster.scheduler_address,
                            "SELECT nope FROM sales GROUP BY nope", files[0]],
                           capture_output=True, text=True, timeout=300)
        rep.check("cli_error", p.returncode == 1 and p.stdout == "" and "error: gpu_query:" in p.stderr,
                  "rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr[-300:]))
    finally:
        client.close()
        cluster.close()
    rep.finish()


if __name__ == "__main__":
    main()
