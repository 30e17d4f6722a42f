"""test_aggregate.py — gpu_aggregate (issue 10 part 1).

The contract: gpu_aggregate('t', x, f, g) returns, as a set of rows with
values AND typeof, what the reference query

    SELECT +(g), count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x),
           gpu_min(x), gpu_max(x) FROM t WHERE f GROUP BY +(g)

returns, on every path and thread count.  Checked here on random tables
(mixed types, NULLs, NOCASE text groups, 1 vs 1.0 groups, texts with
trailing spaces, blobs), with filters and expressions, threads 1/2/4/7, WAL
and rollback journal, ATTACHed schemas, :memory:, temp tables, an open
transaction with uncommitted rows, skewed rowids, an application function
that shadows a built-in, application and overriding collations, UTF-16; plus
which path each case takes (gpuagg_info()'s last_scan), errors and
injection, DIRECTONLY, interrupt, the memory cap, injected worker faults,
and the pool's file descriptors.  The concurrent-writer invariant test is
tests/test_aggregate_writer.py.

Under make test-gpu (GPUAGG_TEST_GPU=1) the reference query's gpu_
aggregates run forced onto the GPU, so the exact states of gpu_aggregate are
checked bit for bit against the GPU path too.
"""

import json
import os
import random
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU, MODES  # noqa: E402

SEED = int(os.environ.get("SEED", "20261130"))
TMP = tempfile.mkdtemp(prefix="gpuagg_aggr_")
COLS = "grp, rows, count, sum, total, avg, min, max"


def connect(path, **kw):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, **kw)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("select gpuagg_config('scan_min_rows', 0)")
    if GPU:  # make test-gpu: the reference query's gpu_ aggregates on the GPU
        for name, value in MODES["forced"]:
            con.execute("select gpuagg_config(?, ?)", (name, value))
    return con


def cfg(con, name, value):
    return con.execute("select gpuagg_config(?, ?)", (name, value)).fetchone()[0]


def last_scan(con):
    return json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]


key = typed_key  # gatest: value and storage class, reals by bits


def rowset(rows):
    return sorted(tuple(key(v) for v in r) for r in rows)


def run(con, sql, params=()):
    try:
        return ("ok", con.execute(sql, params).fetchall())
    except sqlite3.Error as e:
        return ("error", str(e))


def ref_sql(table, x, f, g):
    x = "\n%s\n" % x  # arguments on lines of their own: a -- comment ends there
    return ("SELECT %s, count((%s)), gpu_sum((%s)), gpu_total((%s)), gpu_avg((%s)), "
            "gpu_min((%s)), gpu_max((%s)) FROM %s%s%s"
            % ("+(\n%s\n), count(*)" % g if g else "NULL, count(*)", x, x, x, x, x, x, table,
               " WHERE (\n%s\n)" % f if f else "", " GROUP BY +(\n%s\n)" % g if g else ""))


def aggr_sql(nargs):
    return "SELECT %s FROM gpu_aggregate(%s)" % (COLS, ", ".join(["?"] * nargs))


def compare(rep, con, name, table, x, f=None, g=None, ref_con=None, want_path=None):
    """gpu_aggregate against the reference query; optionally the path."""
    args = [table, x] + ([f] if f is not None or g is not None else []) + ([g] if g is not None else [])
    got = run(con, aggr_sql(len(args)), args)
    ls = last_scan(con)
    want = run(ref_con or con, ref_sql(table, x, f, g))
    if got[0] == "ok" and want[0] == "ok":
        ok = rowset(got[1]) == rowset(want[1])
        detail = "got %r\nwant %r" % (got[1][:6], want[1][:6])
    else:
        # errors: the same message, ours prefixed
        ok = got[0] == want[0] == "error" and got[1] == "gpu_aggregate: " + want[1]
        detail = "got %r want %r" % (got, want)
    if want_path is not None and ok:
        ok = ls["path"] == want_path
        detail = "path %r (why %r), want %s" % (ls["path"], ls["why"], want_path)
    return rep.check(name, ok, "%s [%s | %s | %s | %s] %s" % (detail, table, x, f, g, ls))


# ---------------------------------------------------------------- data

TEXTS = ["a", "A", "b", "B", "a ", "A  ", "abc", "ABC", "", "é", "É", "z", "10", "9"]


def rand_value(r):
    k = r.random()
    if k < 0.12:
        return None
    if k < 0.35:
        return r.randint(-1000, 1000)
    if k < 0.55:
        return r.choice([r.uniform(-1e3, 1e3), r.choice([5.0, -0.0, 0.0, 1e300, 2.5, 1e-300])])
    if k < 0.62:
        return r.choice([5, 5.0])
    if k < 0.75:
        return r.choice(TEXTS + ["12", " 7", "3.5e2", "0x10"])
    if k < 0.80:
        return r.choice([b"", b"\x00\x01", b"zz", bytes([r.randrange(256)])])
    return r.randint(-10, 10)


def make_table(con, name, n, r, rowids=None, extra=""):
    con.execute("CREATE TABLE %s(g TEXT COLLATE NOCASE, n, x, y INTEGER, s TEXT, b%s)" % (name, extra))
    rows = []
    for i in range(n):
        rid = rowids[i] if rowids else None
        g = r.choice(TEXTS + [None])
        nn = r.choice([1, 1.0, 2, 2.0, None, 3, -0.0, 0])
        rows.append((rid, g, nn, rand_value(r), r.randint(0, 10000), r.choice(TEXTS), rand_value(r)))
    con.execute("BEGIN")
    con.executemany("INSERT INTO %s(rowid, g, n, x, y, s, b) VALUES (?,?,?,?,?,?,?)" % name, rows)
    con.execute("COMMIT")


EXPRS = ["x", "y", "n", "x * 2", "abs(y) - 5000", "b", "length(s)", "CASE WHEN y % 3 = 0 THEN x ELSE n END",
         "y / 7.0"]
FILTERS = [None, "y > 5000", "x IS NOT NULL", "s LIKE 'a%'", "y % 7 <> 0", "typeof(x) = 'text'", "0"]
GROUPS = [None, "g", "n", "s", "s COLLATE NOCASE", "s COLLATE RTRIM", "y % 10", "x", "lower(s)",
          "substr(s, 1, 1)", "b", "typeof(x)", "g COLLATE BINARY"]


def contract_cases(rep, con, label, table, r, count, threads_list=(1, 2, 4, 7), ref_con=None,
                   want_path=None):
    for i in range(count):
        th = threads_list[i % len(threads_list)]
        cfg(con, "threads", th)
        x, f, g = r.choice(EXPRS), r.choice(FILTERS), r.choice(GROUPS)
        wp = want_path if want_path is None or th != 1 else "serial"
        compare(rep, con, "%s_%d_t%d" % (label, i, th), table, x, f, g, ref_con=ref_con,
                want_path=wp)


# ---------------------------------------------------------------- sections

def section_contract(rep, r):
    for mode in ("wal", "delete"):
        path = os.path.join(TMP, "c_%s.db" % mode)
        con = connect(path)
        con.execute("PRAGMA journal_mode=%s" % mode)
        make_table(con, "t", 20000, r)
        contract_cases(rep, con, "contract_%s" % mode, "t", r, 90, want_path="parallel")
        # every group expression at 4 threads, with and without a filter
        cfg(con, "threads", 4)
        for gi, g in enumerate(GROUPS):
            compare(rep, con, "group_%s_%d" % (mode, gi), "t", "x", None, g, want_path="parallel")
            compare(rep, con, "group_f_%s_%d" % (mode, gi), "t", "n", "y < 3000", g,
                    want_path="parallel")
        # the empty answers
        compare(rep, con, "nothing_matches_%s" % mode, "t", "x", "0", None, want_path="parallel")
        compare(rep, con, "nothing_matches_grouped_%s" % mode, "t", "x", "0", "g",
                want_path="parallel")
        con.execute("CREATE TABLE empty(x, g)")
        compare(rep, con, "empty_table_%s" % mode, "empty", "x", want_path="parallel")
        compare(rep, con, "empty_table_grouped_%s" % mode, "empty", "x", None, "g",
                want_path="parallel")
        got = con.execute("SELECT %s FROM gpu_aggregate('empty', 'x')" % COLS).fetchall()
        rep.check("empty_row_values_%s" % mode,
                  [tuple(key(v) for v in got[0])] == [tuple(key(v) for v in
                                                            (None, 0, 0, None, 0.0, None, None, None))],
                  repr(got))
        # representatives: first in rowid order ('a' vs 'A', 1 vs 1.0), min/max ties
        con.execute("CREATE TABLE rep(g TEXT COLLATE NOCASE, n, x)")
        con.execute("BEGIN")
        for i in range(3000):
            con.execute("INSERT INTO rep VALUES (?, ?, ?)",
                        ("A" if i == 1500 else "a" if i > 1500 else "b",
                         1.0 if i == 2000 else 1 if i > 2000 else 7, 5.0 if i == 2500 else 5))
        con.execute("COMMIT")
        cfg(con, "threads", 4)
        for g in ("g", "n"):
            compare(rep, con, "rep_first_%s_%s" % (mode, g), "rep", "x", None, g, want_path="parallel")
        got = con.execute("SELECT grp, typeof(grp) FROM gpu_aggregate('rep', 'x', NULL, 'g') "
                          "WHERE grp = 'a' COLLATE NOCASE").fetchall()
        rep.check("rep_text_first_%s" % mode, got == [("A", "text")], repr(got))
        got = con.execute("SELECT typeof(grp) FROM gpu_aggregate('rep', 'x', NULL, 'n') "
                          "WHERE grp = 1").fetchall()
        rep.check("rep_num_first_%s" % mode, got == [("real",)], repr(got))
        got = con.execute("SELECT typeof(max), typeof(min) FROM gpu_aggregate('rep', 'x', "
                          "'rowid > 2500')").fetchall()
        rep.check("max_tie_first_%s" % mode, got == [("real", "real")], repr(got))
        con.close()


def section_group_modes(rep, r):
    """Grouped scans: the workers' hash tables (hash mode), SQLite's GROUP BY
    in each piece (sorted mode, GPUAGG_SCAN_GROUP_BY=sql forces it), and a
    worker's table that fills up (16384 groups) in the middle of a piece,
    moves its groups and goes on: the same answer as the reference query
    each time."""
    path = os.path.join(TMP, "modes.db")
    con = connect(path)
    con.execute("PRAGMA journal_mode=wal")
    make_table(con, "t", 6000, r)
    # many groups: ~20000 keys, each a few rows apart in rowid order, with
    # the choices the contract fixes (1 vs 1.0 keys, 'k' vs 'K' under
    # NOCASE, 5 vs 5.0 max/min ties) on both sides of the table's middle
    con.execute("CREATE TABLE many(k, c TEXT COLLATE NOCASE, x, s TEXT)")
    rows = []
    for i in range(40000):
        k = r.randrange(20000)
        kk = float(k) if (k % 7 == 0 and r.random() < 0.5) else k
        c = ("K%d" if r.random() < 0.5 else "k%d") % (k % 15000)
        x = r.choice([5, 5.0, r.randint(-9, 9), r.uniform(-1e3, 1e3), None, "7", "a", b"z"])
        rows.append((kk, c, x, r.choice(TEXTS)))
    con.execute("BEGIN")
    con.executemany("INSERT INTO many VALUES (?,?,?,?)", rows)
    con.execute("COMMIT")
    # a worker's table holds 1000 groups here (16384 by default): each piece
    # of the many-key groupings fills it, mid-piece
    os.environ["GPUAGG_SCAN_LOCAL_GROUPS"] = "1000"
    # direct mode row by row (0), in the default batches (None), and in
    # batches of 3 rows with 192 bytes of keys: x's TEXT and BLOB values
    # and long keys (s) step a batch early and then their row alone
    for th, batch in ((2, "0"), (4, None), (7, "3")):
        cfg(con, "threads", th)
        if batch is None:
            os.environ.pop("GPUAGG_SCAN_DIRECT_BATCH", None)
        else:
            os.environ["GPUAGG_SCAN_DIRECT_BATCH"] = batch
        for gi, g in enumerate(("k", "c", "k % 10000", "s", "typeof(x)")):
            compare(rep, con, "many_t%d_%d" % (th, gi), "many", "x", None, g, want_path="parallel")
            ls = last_scan(con)
            # hash mode throughout; tens of thousands of keys fill the
            # tables up mid-piece with a row or two a group, so the workers
            # go direct, in batches unless they are off; a few keys never do
            full = (ls["hash_flushes"] > 0 and ls["direct_rows"] > 0 and
                    (ls["direct_batches"] > 0) == (batch != "0") if gi < 3
                    else ls["hash_flushes"] == 0 and ls["direct_rows"] == 0 and
                    ls["direct_batches"] == 0)
            rep.check("many_flush_t%d_%d" % (th, gi),
                      ls["hash_pieces"] == ls["pieces"] > 0 and full, repr(ls))
        compare(rep, con, "many_filter_t%d" % th, "many", "x", "x IS NOT NULL AND k % 3 = 0", "c",
                want_path="parallel")
    del os.environ["GPUAGG_SCAN_LOCAL_GROUPS"]
    os.environ.pop("GPUAGG_SCAN_DIRECT_BATCH", None)
    # sorted mode throughout, on the contract's table and on many groups
    os.environ["GPUAGG_SCAN_GROUP_BY"] = "sql"
    try:
        cfg(con, "threads", 4)
        for gi, g in enumerate(GROUPS[1:]):
            compare(rep, con, "sorted_%d" % gi, "t", "x", None, g, want_path="parallel")
            rep.check("sorted_no_hash_%d" % gi, last_scan(con)["hash_pieces"] == 0,
                      repr(last_scan(con)))
        compare(rep, con, "sorted_many", "many", "x", None, "k", want_path="parallel")
    finally:
        del os.environ["GPUAGG_SCAN_GROUP_BY"]
    con.close()


def section_paths(rep, r):
    path = os.path.join(TMP, "p.db")
    con = connect(path)
    make_table(con, "t", 6000, r)
    cfg(con, "threads", 4)

    def expect(name, want, x="x", f=None, g=None, table="t", why=None, c=None):
        c = c or con
        ok = compare(rep, c, name, table, x, f, g, want_path=want)
        if ok and why:
            ls = last_scan(c)
            rep.check(name + "_why", why in ls["why"], repr(ls))

    expect("parallel_plain", "parallel", why="snapshot")
    cfg(con, "threads", 1)
    expect("serial_threads1", "serial", why="threads = 1")
    cfg(con, "threads", 4)
    cfg(con, "scan_min_rows", 1000000)
    expect("serial_small", "serial", why="scan_min_rows")
    cfg(con, "scan_min_rows", 0)
    # :memory: and temp
    mem = connect(":memory:")
    cfg(mem, "threads", 4)
    make_table(mem, "t", 3000, r)
    expect("serial_memory", "serial", c=mem, why="in-memory")
    con.execute("CREATE TEMP TABLE tt AS SELECT * FROM t")
    expect("serial_temp", "serial", table="tt", why="temp")
    # a temp table shadowing main.t: SQLite's search order, so serial
    con.execute("CREATE TEMP TABLE t AS SELECT * FROM main.t WHERE y < 100")
    expect("serial_temp_shadow", "serial", g="g", why="temp")
    expect("parallel_main_qualified", "parallel", table="main.t")
    con.execute("DROP TABLE temp.t")
    # views, virtual tables, WITHOUT ROWID
    con.execute("CREATE VIEW v AS SELECT * FROM t WHERE y > 10")
    expect("serial_view", "serial", table="v", g="g", why="view")
    con.execute("CREATE TEMP VIEW tv AS SELECT * FROM t WHERE y > 10")
    expect("serial_temp_view", "serial", table="tv", why="temp")
    con.execute("CREATE TABLE wr(k INTEGER PRIMARY KEY, x, g) WITHOUT ROWID")
    con.execute("INSERT INTO wr SELECT rowid, x, g FROM t")
    expect("serial_without_rowid", "serial", table="wr", g="g", why="WITHOUT ROWID")
    con.execute("CREATE VIRTUAL TABLE vt USING fts4(value)")
    con.execute("INSERT INTO vt VALUES ('1'), ('2.5'), ('a'), (NULL), ('3')")
    expect("serial_virtual", "serial", x="value", table="vt", why="virtual")
    # rowid shadowed by columns
    con.execute("CREATE TABLE sh1(rowid TEXT, x)")
    con.execute("INSERT INTO sh1 VALUES ('r1', 1), ('r2', 2.5), (NULL, 3)")
    expect("parallel_rowid_column", "parallel", table="sh1")
    con.execute("CREATE TABLE sh3(rowid, _rowid_, oid, x)")
    con.execute("INSERT INTO sh3 VALUES (1, 2, 3, 4), (5, 6, 7, 8.5)")
    expect("serial_rowid_all_shadowed", "serial", table="sh3", why="rowid")
    # an open transaction: uncommitted rows count, on the serial path
    con.execute("BEGIN")
    con.execute("INSERT INTO t(g, x, y) VALUES ('zz', 123456, 1)")
    expect("serial_txn_uncommitted", "serial", g="g", why="transaction")
    got = con.execute("SELECT count FROM gpu_aggregate('t', 'x', 'x = 123456')").fetchall()
    rep.check("txn_uncommitted_counted", got == [(1,)], repr(got))
    con.execute("ROLLBACK")
    con.execute("BEGIN")
    con.execute("SELECT count(*) FROM t").fetchall()
    expect("serial_read_txn", "serial", why="transaction")
    con.execute("COMMIT")
    # application functions: new, and shadowing a built-in
    con.create_function("myf", 1, lambda v: (v or 0) * 3 if isinstance(v, (int, float)) else v,
                        deterministic=True)
    expect("serial_app_function", "serial", x="myf(x)", why="myf")
    expect("serial_app_function_filter", "serial", f="myf(y) > 100", why="myf")
    con.create_function("lower", 1, lambda v: ("L:" + v) if isinstance(v, str) else v,
                        deterministic=True)
    expect("serial_shadow_lower", "serial", g="lower(s)", why="lower")
    got = con.execute("SELECT grp FROM gpu_aggregate('t', 'x', NULL, 'lower(s)') "
                      "WHERE grp = 'L:a'").fetchall()
    rep.check("shadow_lower_used", got == [("L:a",)], repr(got))
    con.execute("PRAGMA case_sensitive_like = 1")
    expect("serial_case_sensitive_like", "serial", f="s LIKE 'a%'", why="like")
    con.execute("PRAGMA case_sensitive_like = 0")
    # collations: an application one, and one overriding NOCASE
    con.create_collation("rev", lambda a, b: (a < b) - (a > b))
    expect("serial_app_collation", "serial", g="s COLLATE rev", why="rev")
    con.execute("CREATE TABLE ct(s TEXT COLLATE rev, x)")
    con.execute("INSERT INTO ct SELECT s, x FROM t")
    expect("serial_app_collation_column", "serial", table="ct", g="s", why="rev")
    expect("parallel_app_collation_unused", "parallel", table="ct", g="x")
    # SQLite without column metadata: the CREATE statement's COLLATEs decide
    os.environ["GPUAGG_SCAN_NO_METADATA"] = "1"
    expect("nometa_serial_app_collation_table", "serial", table="ct", g="x", why="rev")
    expect("nometa_parallel_builtin", "parallel", g="g")
    del os.environ["GPUAGG_SCAN_NO_METADATA"]
    # a subquery, or another table's name
    con.execute("CREATE TABLE other(v)")
    con.execute("INSERT INTO other VALUES (1), (2), (3)")
    expect("serial_subquery", "serial", f="y > (SELECT 5000)", why="subquery")
    expect("serial_in_table", "serial", f="y % 4 IN other", why="other")
    # exclusive locking mode
    lk = connect(path)
    cfg(lk, "threads", 4)
    lk.execute("PRAGMA locking_mode = EXCLUSIVE")
    expect("serial_exclusive", "serial", c=lk, why="locking_mode")
    lk.close()
    # a worker fault and the group memory cap fall back, same answer
    os.environ["GPUAGG_SCAN_FAULT"] = "piece:3"
    expect("fallback_worker_fault", "serial", g="g", why="injected")
    os.environ["GPUAGG_SCAN_FAULT"] = "begin"
    expect("fallback_begin_fault", "serial", why="injected")
    del os.environ["GPUAGG_SCAN_FAULT"]
    expect("parallel_after_faults", "parallel", g="g")
    os.environ["GPUAGG_SCAN_MAX_GROUP_BYTES"] = "20000"
    expect("fallback_group_cap", "serial", g="y", why="memory cap")
    del os.environ["GPUAGG_SCAN_MAX_GROUP_BYTES"]
    expect("parallel_many_groups", "parallel", g="y")
    # a connection whose NOCASE is not SQLite's (removing an override would
    # leave it without any NOCASE: a connection of its own)
    ov = connect(path)
    cfg(ov, "threads", 4)
    ov.create_collation("NOCASE", lambda a, b: (a.casefold() > b.casefold()) - (a.casefold() < b.casefold()))
    expect("serial_nocase_overridden", "serial", g="g", why="NOCASE", c=ov)
    ov.close()
    ov = connect(path)
    cfg(ov, "threads", 4)
    ov.create_collation("RTRIM", lambda a, b: (a.rstrip() > b.rstrip()) - (a.rstrip() < b.rstrip()))
    expect("serial_rtrim_overridden", "serial", g="s COLLATE RTRIM", why="RTRIM", c=ov)
    ov.close()
    mem.close()
    con.close()


def section_readonly(rep, r):
    """Files opened so that the caller cannot write them (issue 21's shard
    files): mode=ro scans in parallel on its snapshot as any connection
    does, and immutable=1, which takes no locks (SQLite reports its
    locking_mode as EXCLUSIVE), scans in parallel with workers that open
    the file the same way (engine/scan/scan_pool.c rule 6).  The file's name
    holds characters a URI must escape, so a worker that opened another
    file, or failed to open it, would show."""
    from urllib.parse import quote
    for jm in ("wal", "delete"):
        path = os.path.join(TMP, "ro %s #1?%%.db" % jm)
        for f in (path, path + "-wal", path + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        w = connect(path)
        w.execute("PRAGMA journal_mode=%s" % jm)
        make_table(w, "t", 6000, r)
        if jm == "wal":
            w.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        w.close()
        for mode, why in (("mode=ro", "snapshot"), ("mode=ro&immutable=1", "immutable")):
            c = connect("file:%s?%s" % (quote(path), mode), uri=True)
            cfg(c, "threads", 4)
            idle0, most = scans(c)["pool_idle"], 0
            for gi, g in enumerate((None, "k", "ta")):
                name = "readonly_%s_%s_%d" % (jm, mode.replace("&", "_").replace("=", ""), gi)
                if compare(rep, c, name, "t", "x", None, g, want_path="parallel"):
                    ls = last_scan(c)
                    most = max(most, ls["threads"])
                    rep.check(name + "_why", why in ls["why"], repr(ls))
            if jm == "wal" and "immutable" in mode:
                # no snapshot helper: the file's pool holds its workers only,
                # and nothing opened the -wal or -shm
                idle = scans(c)["pool_idle"] - idle0
                rep.check("readonly_immutable_no_helper",
                          idle == most and fds_under(path + "-") == 0,
                          "%d idle for %d workers, %d descriptors" % (
                              idle, most, fds_under(path + "-")))
            c.close()


def section_attach(rep, r):
    main = connect(os.path.join(TMP, "m.db"))
    cfg(main, "threads", 4)
    make_table(main, "t", 4000, r)
    main.execute("ATTACH ? AS aux", (os.path.join(TMP, "aux.db"),))
    main.execute("PRAGMA aux.journal_mode = wal")
    make_table(main, "aux.u", 5000, r)
    compare(rep, main, "attach_qualified", "aux.u", "x", None, "g", want_path="parallel")
    compare(rep, main, "attach_unqualified", "u", "x", "y > 10", "s", want_path="parallel")
    main.execute("ATTACH ':memory:' AS mem")
    make_table(main, "mem.w", 2000, r)
    compare(rep, main, "attach_memory", "mem.w", "x", None, "g", want_path="serial")
    main.execute("ATTACH ? AS \"odd name\"", (os.path.join(TMP, "odd.db"),))
    make_table(main, "\"odd name\".\"t 2\"", 3000, r)
    compare(rep, main, "attach_odd_names", '"odd name"."t 2"', "x", None, "g", want_path="parallel")
    main.close()


def section_rowids(rep, r):
    con = connect(os.path.join(TMP, "rowid.db"))
    cfg(con, "threads", 4)
    # 1..N plus one row at 2^62: the dispenser jumps the gap
    n = 60000
    make_table(con, "skew", n + 1, r, rowids=list(range(1, n + 1)) + [1 << 62])
    t0 = time.time()
    compare(rep, con, "skew_2p62", "skew", "x", None, "g", want_path="parallel")
    ls = last_scan(con)
    rep.check("skew_2p62_pieces", ls["pieces"] < 200, repr(ls))
    rep.check("skew_2p62_fast", time.time() - t0 < 5, "%.1f s" % (time.time() - t0))
    # the extremes of int64, negative rowids, sparse random rowids
    ids = [-(1 << 63), (1 << 63) - 1, -5, 0, 7] + [r.randrange(-(1 << 62), 1 << 62) for _ in range(5000)]
    ids = sorted(set(ids))
    make_table(con, "extremes", len(ids), r, rowids=ids)
    compare(rep, con, "int64_extremes", "extremes", "y", "y > 100", None, want_path="parallel")
    compare(rep, con, "int64_extremes_grouped", "extremes", "x", None, "s", want_path="parallel")
    # clusters: dense runs far apart
    ids = []
    for c in range(6):
        base = r.randrange(1 << 50) + c * (1 << 55)
        ids += range(base, base + 3000)
    make_table(con, "clusters", len(ids), r, rowids=ids)
    compare(rep, con, "clusters", "clusters", "x", None, "g", want_path="parallel")
    ls = last_scan(con)
    rep.check("clusters_pieces", ls["pieces"] < 500, repr(ls))
    # INTEGER PRIMARY KEY
    con.execute("CREATE TABLE ipk(id INTEGER PRIMARY KEY, x, g)")
    with con:
        con.execute("BEGIN")
        con.executemany("INSERT INTO ipk VALUES (?, ?, ?)",
                        [(i * 1000 - 3000000, rand_value(r), r.choice(TEXTS)) for i in range(5000)])
    compare(rep, con, "integer_primary_key", "ipk", "x", "id > 0", "g", want_path="parallel")
    con.close()


def section_utf16(rep, r):
    con = sqlite3.connect(os.path.join(TMP, "u16.db"), isolation_level=None)
    con.execute("PRAGMA encoding = 'UTF-16le'")
    con.execute("CREATE TABLE keep(x)")
    con.close()
    con = connect(os.path.join(TMP, "u16.db"))
    cfg(con, "threads", 4)
    make_table(con, "t", 5000, r)
    for g in (None, "g", "s", "s COLLATE RTRIM"):
        # NOCASE/RTRIM keys: SQLite compares them as UTF-8 but returns the
        # stored UTF-16 (issue 22): the serial path (planner/path.c rule 9)
        p = "serial" if g in ("g", "s COLLATE RTRIM") else "parallel"  # g: NOCASE
        compare(rep, con, "utf16_%s" % g, "t", "s", None, g, want_path=p)
        compare(rep, con, "utf16_x_%s" % g, "t", "x", "y > 2000", g, want_path=p)
    con.close()


def section_overflow(rep, r):
    con = connect(os.path.join(TMP, "ovf.db"))
    con.execute("CREATE TABLE t(x, g)")
    with con:
        con.execute("BEGIN")
        con.executemany("INSERT INTO t VALUES (?, ?)",
                        [((1 << 62) if i % 2 else 12, i % 3) for i in range(4000)])
    for th in (1, 4):
        cfg(con, "threads", th)
        compare(rep, con, "overflow_t%d" % th, "t", "x")
        compare(rep, con, "overflow_grouped_t%d" % th, "t", "x", None, "g")
        compare(rep, con, "overflow_total_t%d" % th, "t", "x * 1.0", None, "g")
    con.close()


def section_errors(rep, r):
    path = os.path.join(TMP, "e.db")
    con = connect(path)
    make_table(con, "t", 3000, r)
    cfg(con, "threads", 4)
    before = con.execute("SELECT count(*), gpu_sum(y) FROM t").fetchone()

    def err(name, sql, params=(), want=None):
        g = run(con, sql, params)
        ok = g[0] == "error" and g[1].startswith("gpu_aggregate:") and (want is None or want in g[1])
        rep.check(name, ok, repr(g))

    sel = "SELECT * FROM gpu_aggregate"
    err("err_no_args", sel + "()", want="expected 2 to 4 arguments")
    err("err_one_arg", sel + "('t')", want="got 1")
    err("err_five_args", sel + "('t', 'x', '', '', 'y')", want="got 5")
    err("err_six_args", sel + "('t', 'x', '', '', 'y', 'z')")
    err("err_no_table", sel + "('nope', 'x')", want="no such table: nope")
    err("err_no_schema", sel + "('nope.t', 'x')", want="no such table")
    err("err_table_injection", sel + "('t; DROP TABLE t', 'x')", want="no such table")
    err("err_no_column", sel + "('t', 'nope')", want="no such column: nope")
    err("err_bad_expr", sel + "('t', 'x +')", want="syntax error")
    err("err_bad_filter_fn", sel + "('t', 'x', 'nofn(y)')", want="no such function: nofn")
    err("err_empty_expr", sel + "('t', '')", want="empty")
    err("err_null_table", sel + "(NULL, 'x')", want="must be text")
    err("err_int_expr", sel + "('t', 1)", want="must be text")
    err("err_blob_filter", sel + "('t', 'x', x'00')", want="must be text")
    err("err_aggregate_expr", sel + "('t', 'sum(x)')")
    err("err_aggregate_group", sel + "('t', 'x', NULL, 'count(*)')")
    err("err_distinct", sel + "('t', 'DISTINCT x')", want="syntax error")
    err("err_star", sel + "('t', '*')")
    for i, f in enumerate(["1) ; DELETE FROM t; SELECT (1", "1); DELETE FROM t; --", "1) OR (1",
                           "x) FROM t; --", "y > 0 ; DROP TABLE t", "1 /* unterminated",
                           "'unterminated", "\"unterminated", "(1", "1))((1", "y > ?1", "y > :a",
                           "y > @a", "y > $a", "y > ?"]):
        err("err_injection_filter_%d" % i, sel + "('t', 'x', ?)", (f,))
        err("err_injection_group_%d" % i, sel + "('t', 'x', NULL, ?)", (f,))
        err("err_injection_expr_%d" % i, sel + "('t', ?)", (f,))
    after = con.execute("SELECT count(*), gpu_sum(y) FROM t").fetchone()
    rep.check("injection_changed_nothing", before == after and
              con.execute("SELECT count(*) FROM sqlite_schema WHERE name = 't'").fetchone()[0] == 1,
              "%r -> %r" % (before, after))
    # what looks dangerous but is one expression works
    compare(rep, con, "ok_semicolon_in_string", "t", "x", "s <> ';' -- a comment", "g",
            want_path="parallel")
    compare(rep, con, "ok_comment_in_expr", "t", "x /* c */ + 0", None, None, want_path="parallel")
    compare(rep, con, "ok_quoted_column", "t", '"x"', "[y] > 10", "`s`", want_path="parallel")
    # DIRECTONLY: not from a view or trigger of the schema; a TEMP view is fine
    con.execute("CREATE VIEW vbad AS SELECT * FROM gpu_aggregate('t', 'x')")
    err_v = run(con, "SELECT * FROM vbad")
    rep.check("directonly_view", err_v[0] == "error" and "unsafe use" in err_v[1], repr(err_v))
    con.execute("CREATE TABLE log(v)")
    con.execute("CREATE TRIGGER trg AFTER INSERT ON log BEGIN "
                "INSERT INTO log SELECT sum FROM gpu_aggregate('t', 'x'); END")
    err_t = run(con, "INSERT INTO log VALUES (1)")
    rep.check("directonly_trigger", err_t[0] == "error" and "unsafe use" in err_t[1], repr(err_t))
    con.execute("CREATE TEMP VIEW vok AS SELECT * FROM gpu_aggregate('t', 'x')")
    got = run(con, "SELECT rows FROM vok")
    rep.check("temp_view_allowed", got == ("ok", [(3000,)]), repr(got))
    e = run(con, "CREATE VIRTUAL TABLE vv USING gpu_aggregate(t, x)")
    rep.check("no_create_virtual_table", e[0] == "error", repr(e))
    # config knobs
    for v, ok in (("0", True), ("1", True), ("256", True), ("257", False), ("-1", False), ("x", False)):
        g = run(con, "SELECT gpuagg_config('threads', ?)", (v,))
        rep.check("config_threads_%s" % v, (g[0] == "ok") == ok and
                  (not ok or str(g[1][0][0]) == v) and (ok or g[1].startswith("gpuagg_config:")),
                  repr(g))
    rep.check("config_threads_default", run(connect(":memory:"), "SELECT gpuagg_config('threads')")
              == ("ok", [(0,)]), "")
    g = run(con, "SELECT gpuagg_config('scan_min_rows', 12345)")
    rep.check("config_scan_min_rows", g == ("ok", [(12345,)]), repr(g))
    info = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])
    rep.check("info_config_knobs", info["config"].get("threads") == 256 and
              info["config"].get("scan_min_rows") == 12345, repr(info["config"]))
    con.close()


def interrupt_after(con, sql, args, delay):
    """Run sql on a thread, interrupt con after delay seconds (when to send
    it only: nothing asserts on time); returns run()'s answer and the
    seconds from the interrupt to the end."""
    res = {}
    th = threading.Thread(target=lambda: res.update(r=run(con, sql, args)))
    th.start()
    time.sleep(delay)
    ti = time.time()
    con.interrupt()
    th.join()
    return res["r"], time.time() - ti


def section_interrupt(rep, r):
    path = os.path.join(TMP, "intr.db")
    con = connect(path)
    con.execute("CREATE TABLE t(x, y)")
    con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 150000) "
                "INSERT INTO t SELECT i * 0.5, i FROM c")
    slow = "length(printf('%.40f %.40f %.40f', x, x / 3, x / 7))"
    q_full = "SELECT rows, count, sum FROM gpu_aggregate('t', ?)"
    q_rows = "SELECT rows FROM gpu_aggregate('t', ?)"

    def one(name, delay_cap):
        """A full run, an interrupted one, then a full run again.  Promptness
        is asserted on counters, never on seconds: a parallel scan of 30
        pieces (GPUAGG_SCAN_PIECE_ROWS) is interrupted once the caller's
        thread is seen inside a piece, and must stop before handing out
        every piece; a serial one must end in the interrupt error (it would
        have answered had the interrupt come after its end)."""
        full = con.execute(q_full, (slow,)).fetchall()
        ls = last_scan(con)
        name = name or "interrupt_%s" % ls["path"]
        if ls["path"] == "parallel":
            got, seen = interrupt_when(con, q_rows, (slow,), "caller_in_piece")
            li = last_scan(con)
            rep.check(name + "_prompt", seen and 0 < li["pieces"] < ls["pieces"],
                      "seen %r: %r pieces handed out of the full run's %r" %
                      (seen, li["pieces"], ls["pieces"]))
        else:
            got, _ = interrupt_after(con, q_rows, (slow,), delay_cap)
        rep.check(name, got[0] == "error" and "interrupt" in got[1], repr(got))
        again = con.execute(q_full, (slow,)).fetchall()
        rep.check(name + "_then_right", again == full, "%r vs %r" % (again, full))
        return ls

    os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "5000"
    try:
        for th in (4, 1):
            cfg(con, "threads", th)
            one(None, 0.05)
    finally:
        del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
    # One long piece per worker (2 workers, 2 pieces): the caller's thread,
    # worker 0, must see the interrupt inside its piece, not at its end.
    # No timing: the interrupt is sent once the gauge shows the caller's
    # thread inside a piece (its poll set), and last_scan says where it
    # landed ("between": only after the piece; "wait": after worker 0 was
    # done).
    cfg(con, "threads", 2)
    os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "75000"
    try:
        full = con.execute(q_full, (slow,)).fetchall()
        ls = last_scan(con)
        rep.check("interrupt_in_piece_setup", ls["path"] == "parallel" and ls["threads"] == 2 and
                  ls["pieces"] == 2, repr(ls))
        # pieces of seconds (a hex of 20 kB a row): the interrupt, sent as
        # soon as the piece is seen running, lands inside it unless this
        # thread stalls for as long
        heavy = "length(hex(zeroblob(20000 + y % 2)))"
        got, seen = interrupt_when(con, q_rows, (heavy,), "caller_in_piece")
        ls = last_scan(con)
        rep.check("interrupt_in_piece", seen and got[0] == "error" and "interrupt" in got[1] and
                  ls["interrupted_in"] == "piece", "%r seen %r %r" % (got, seen, ls))
        again = con.execute(q_full, (slow,)).fetchall()
        rep.check("interrupt_in_piece_then_right", again == full, "%r vs %r" % (again, full))
    finally:
        del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
    con.close()


def interrupt_when(con, sql, args, gauge):
    """Run sql on a thread and interrupt con once the process-wide gauge
    (gpuagg_info()'s scans) is nonzero, seen from another connection: no
    timing.  The interrupt is sent again every few ms until the call ends
    (the probe statement of SQLite before 3.41 may miss a single one that
    lands as it starts).  Returns run()'s answer and whether the gauge was
    seen (a guard of 120 s ends the wait for one that never rises: a FAIL,
    not a hang)."""
    res = {}
    mon = connect(":memory:")
    th = threading.Thread(target=lambda: res.update(r=run(con, sql, args)))
    th.start()
    seen = False
    for _ in range(120000):
        if scans(mon)[gauge] > 0:
            seen = True
            break
        if not th.is_alive():
            break
        time.sleep(0.001)
    while th.is_alive():
        con.interrupt()
        th.join(0.005)
    mon.close()
    return res["r"], seen


def section_snapshot(rep, r):
    """Issue 22 (defect 8, concern D): the snapshot waits a bounded number
    of retries for a busy lock, then serial; it honours an interrupt while
    it waits; a schema change between planning and the snapshot goes
    serial.  Counters and states only, never seconds."""
    path = os.path.join(TMP, "snap.db")
    con = connect(path, timeout=10)  # busy_timeout 10000
    con.execute("PRAGMA journal_mode = wal")
    make_table(con, "t", 6000, r)
    cfg(con, "threads", 4)
    compare(rep, con, "snap_free", "t", "x", None, "g", want_path="parallel")
    rep.check("snap_free_no_waits", last_scan(con)["snapshot_waits"] == 0, repr(last_scan(con)))
    # a write transaction open on another connection: serial at once
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("BEGIN IMMEDIATE")
    w.execute("INSERT INTO t(g, x) VALUES ('uncommitted', 1e9)")
    ok = compare(rep, con, "snap_writer_serial", "t", "x", None, "g", want_path="serial")
    ls = last_scan(con)
    rep.check("snap_writer_bounded", ok and "write lock is busy" in ls["why"] and
              0 < ls["snapshot_waits"] <= 40, repr(ls))
    # an interrupt while it waits (a wait made long for the test: up to the
    # busy timeout) ends the call at once, noticed in the snapshot
    os.environ["GPUAGG_SCAN_SNAPSHOT_TRIES"] = "1000000000"
    try:
        got, seen = interrupt_when(con, "SELECT rows FROM gpu_aggregate('t', 'x')", (),
                                   "waiting_for_snapshot")
        ls = last_scan(con)
        rep.check("snap_interrupt_in_wait", seen and got[0] == "error" and "interrupt" in got[1] and
                  ls["interrupted_in"] == "snapshot", "%r %r" % (got, ls))
    finally:
        del os.environ["GPUAGG_SCAN_SNAPSHOT_TRIES"]
    rep.check("snap_gauge_back", scans(con)["waiting_for_snapshot"] == 0, repr(scans(con)))
    w.execute("ROLLBACK")
    w.close()
    compare(rep, con, "snap_after_writer", "t", "x", None, "g", want_path="parallel")
    # the rollback-journal retry loop (a gpu_cache load: its caller holds no
    # read lock), with worker 0's begin made busy as under a writer's
    # PENDING lock: bounded too, then the serial load
    rb = os.path.join(TMP, "snap_rb.db")
    c2 = connect(rb, timeout=10)
    make_table(c2, "t", 6000, r)
    cfg(c2, "threads", 4)
    os.environ["GPUAGG_SCAN_FAULT"] = "busy"
    try:
        n = c2.execute("SELECT gpu_cache('t', 'y')").fetchone()[0]
    finally:
        del os.environ["GPUAGG_SCAN_FAULT"]
    ent = json.loads(c2.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]["entries"]
    note = ent[0].get("how", "") if ent else ""
    import re
    m = re.search(r"database is locked .*; (\d+) retries", note)
    rep.check("snap_rollback_bounded", n == 6000 and m is not None and 0 < int(m.group(1)) <= 40,
              "%r %r" % (n, ent))
    c2.close()
    # the schema changes between planning and the snapshot (another
    # connection's CREATE and DROP, injected there): serial, same answer
    os.environ["GPUAGG_SCAN_FAULT"] = "schema"
    try:
        compare(rep, con, "snap_schema_changed", "t", "x", None, "g", want_path="serial")
        rep.check("snap_schema_changed_why", "schema changed" in last_scan(con)["why"],
                  repr(last_scan(con)))
    finally:
        del os.environ["GPUAGG_SCAN_FAULT"]
    compare(rep, con, "snap_schema_after", "t", "x", None, "g", want_path="parallel")
    con.close()


def fds_to(path):
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == path:
                n += 1
        except OSError:
            pass
    return n


def section_pool(rep, r):
    path = os.path.join(TMP, "pool.db")
    con = connect(path)
    make_table(con, "t", 3000, r)
    cfg(con, "threads", 3)
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    rep.check("pool_parallel", last_scan(con)["path"] == "parallel", repr(last_scan(con)))
    held = fds_to(path)
    rep.check("pool_keeps_connections", held >= 3, "%d descriptors" % held)
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    rep.check("pool_reuses", fds_to(path) == held, "%d then %d" % (held, fds_to(path)))
    con2 = connect(path)
    cfg(con2, "threads", 3)
    con2.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    con.close()
    rep.check("pool_survives_one_close", fds_to(path) >= 3, "%d" % fds_to(path))
    con2.close()
    rep.check("pool_closed_with_last_connection", fds_to(path) == 0, "%d" % fds_to(path))
    # a file replaced under the same path is not read through old descriptors
    con = connect(path)
    cfg(con, "threads", 3)
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    other = connect(":memory:")
    con.close()
    os.unlink(path)
    con = connect(path)
    cfg(con, "threads", 3)
    con.execute("CREATE TABLE t(x)")
    con.execute("INSERT INTO t VALUES (1), (2)")
    got = con.execute("SELECT rows, sum FROM gpu_aggregate('t', 'x')").fetchall()
    rep.check("pool_new_file", got == [(2, 3)], repr(got))
    other.close()
    con.close()


def scans(con):
    """gpuagg_info()'s process-wide "scans" object (pool and gauges)."""
    return json.loads(con.execute("select gpuagg_info()").fetchone()[0])["scans"]


def fds_under(prefix, deleted=None):
    """Descriptors of this process to files whose path starts with prefix;
    deleted=True: only to deleted files, False: only to existing ones."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith(prefix) and (deleted is None or link.endswith(" (deleted)") == deleted):
            n += 1
    return n


def shard_table(con, schema, n):
    con.execute("CREATE TABLE %s.t(x, g)" % schema)
    con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
                "INSERT INTO %s.t SELECT i, i %% 7 FROM c" % (n, schema))


def section_pool_files(rep, r):
    """Issue 22 (defect 7): pools of detached or deleted files are closed,
    and the idle pooled connections of all files stay within the bound."""
    d = os.path.join(TMP, "shards")
    os.makedirs(d)
    con = connect(os.path.join(d, "main.db"))
    cfg(con, "threads", 4)
    shard_table(con, "main", 3000)
    # 1. detached in turn: the next call drops the pool of the file before
    for i in range(20):
        shard = os.path.join(d, "s%02d.db" % i)
        con.execute("ATTACH ? AS s", (shard,))
        shard_table(con, "s", 2000)
        got = con.execute("SELECT rows FROM gpu_aggregate('s.t', 'x')").fetchall()
        ok = got == [(2000,)] and last_scan(con)["path"] == "parallel"
        con.execute("DETACH s")
        if i:  # the previous shard: dropped by the call above
            prev = os.path.join(d, "s%02d.db" % (i - 1))
            ok = ok and fds_to(prev) == 0
        rep.check("pool_detached_%d" % i, ok, "%r %r, %d fds to the previous shard"
                  % (got, last_scan(con), fds_to(os.path.join(d, "s%02d.db" % max(i - 1, 0)))))
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    n = fds_under(os.path.join(d, "s"))
    rep.check("pool_detached_all_closed", n == 0, "%d fds to detached shards" % n)
    # 2. attached, detached and deleted in turn (the audit's case)
    for i in range(20):
        shard = os.path.join(d, "x%02d.db" % i)
        con.execute("ATTACH ? AS s", (shard,))
        shard_table(con, "s", 2000)
        con.execute("SELECT * FROM gpu_aggregate('s.t', 'x')").fetchall()
        con.execute("DETACH s")
        os.unlink(shard)
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    n = fds_under(os.path.join(d, "x"), deleted=True)
    rep.check("pool_deleted_all_closed", n == 0, "%d fds to deleted shards" % n)
    # 3. deleted while still attached: the pool's idle connections close at
    # the next pool operation; the user's connection keeps its own
    shard = os.path.join(d, "y.db")
    con.execute("ATTACH ? AS s", (shard,))
    shard_table(con, "s", 2000)
    own = fds_to(shard)
    con.execute("SELECT * FROM gpu_aggregate('s.t', 'x')").fetchall()
    pooled = fds_to(shard) - own
    os.unlink(shard)
    con.execute("SELECT * FROM gpu_aggregate('t', 'x')").fetchall()
    n = fds_under(shard, deleted=True)
    rep.check("pool_deleted_attached_closed", pooled >= 3 and n == own,
              "%d pooled before, %d fds to the deleted file, the user's own %d" % (pooled, n, own))
    con.execute("DETACH s")
    con.close()
    # 4. the bound: ten files at once (main and 9 attached), WAL (a helper
    # each), 8 threads: 90 connections would be kept without it
    con = connect(os.path.join(d, "b0.db"))
    cfg(con, "threads", 8)
    con.execute("PRAGMA journal_mode = wal")
    shard_table(con, "main", 3000)
    for i in range(1, 10):
        con.execute("ATTACH ? AS b%d" % i, (os.path.join(d, "b%d.db" % i),))
        con.execute("PRAGMA b%d.journal_mode = wal" % i)
        shard_table(con, "b%d" % i, 3000)
    par = 0
    for i in range(10):
        con.execute("SELECT * FROM gpu_aggregate('%s.t', 'x')" % ("main" if i == 0 else "b%d" % i)).fetchall()
        par += last_scan(con)["path"] == "parallel"
    sc = scans(con)
    rep.check("pool_bound", par == 10 and sc["pool_max_idle"] == 64 and 48 <= sc["pool_idle"] <= 64,
              "%d parallel, %r" % (par, sc))
    con.close()
    rep.check("pool_bound_closed", scans(connect(":memory:"))["pool_idle"] == 0, "")


def main():
    rep = Reporter("aggregate")
    r = random.Random(SEED)
    for section in (section_contract, section_group_modes, section_paths, section_readonly, section_attach,
                    section_rowids, section_utf16,
                    section_overflow, section_errors, section_interrupt, section_pool, section_pool_files,
                    section_snapshot):
        t0 = time.time()
        try:
            section(rep, r)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            rep.check(section.__name__ + "_crashed", False, repr(e))
        if os.environ.get("VERBOSE") == "1":
            print("# %s: %.1f s" % (section.__name__, time.time() - t0))
    rep.finish()


if __name__ == "__main__":
    main()
