"""test_trust.py — the workers and the cache act as the caller's connection
would, or step aside (issue 22, "trust round 2").

Each section rebuilds one defect of the audit as a test: the answer of
gpu_aggregate (parallel path forced: threads = 2, scan_min_rows = 0) or of
the column cache must equal what the caller's own connection reads, and the
path must be the one the rules of planner/path.c and ext/cache/cache_fns.c
promise (gpuagg_info()'s last_scan.path and why).

  detach       a cache entry of an attached file that was detached, written
               by another connection and attached again (defect 1)
  authorizer   SQLITE_IGNORE on a column or a function, SQLITE_DENY, on the
               parallel path and the cache, set before or after a load (2)
  limits       sqlite3_limit reaches the workers (2)
  progress     the caller's progress handler runs while the workers scan,
               and stops the scan (2)
  snapshot     another statement of the connection holds an older WAL read
               snapshot (3)
  writing      a cached answer inside a statement that writes (4)
  names        a TEMP table shadowing the target's name, another schema
               named in the text (5)
  functions    changes(), last_insert_rowid(), random(), 'now' in date and
               time functions, literal dates (6); date and time functions
               over columns run in parallel (issue 37)
  pinned       issue 37: rows holding 'now' (any case; ' now ' is no time)
               under date(), strftime('%s') and julianday() give one time,
               the caller's at the call's start, in every group across 16
               workers; a post query that reads the time too, or a VFS that
               cannot be shimmed, takes the serial path and says why
  vfs_names    issue 37 (session 3): the application registers another VFS
               under the caller's VFS's name, unregisters it, registers it
               again: the workers read the caller's VFS itself (its files,
               counted by its xOpen; its time, pinned), never the one the
               name finds now (engine/scan/pintime.c rule 5)
  reverse      PRAGMA reverse_unordered_selects and the first-row tie-break,
               and the pragma given back (11)
  uncommitted  shared cache with read_uncommitted = 1 (11)
  modules      issue 36 defect 4: a virtual table module or a pragma's
               table-valued function in the text (connection state:
               pragma_busy_timeout, pragma_cache_size, pragma_module_list)
               takes the serial path; a column named json_each does not
  dqs          issue 36 defect 7: a double-quoted word that names no column
               is a string to SQLite, so "Hello" and "hello" are two values
               in gpu_query (and an alias is no alias in the select list)
"""

import ctypes
import json
import os
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_trust_")
ROWS = 20000  # enough rows for several pieces on two workers


def connect(path, uri=False):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, uri=uri)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("select gpuagg_config('scan_min_rows', 0)")
    con.execute("select gpuagg_config('threads', 2)")
    return con


def last_scan(con):
    return json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]


def one(con, sql, params=()):
    try:
        row = con.execute(sql, params).fetchone()
    except sqlite3.Error as e:
        return ("error", str(e))
    return row[0] if row else None


def typed(v):
    return (type(v).__name__, struct.pack("<d", v) if isinstance(v, float) else v)


def fresh(name, journal="wal", rows=ROWS, setup=None):
    """A file database with t(id INTEGER PRIMARY KEY, x, y) of `rows` rows."""
    path = os.path.join(TMP, name)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=%s" % journal)
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x, y)")
    con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
                "INSERT INTO t SELECT i, i % 7, i % 3 FROM c", (rows,))
    if setup:
        for sql in setup:
            con.execute(sql)
    con.close()
    return path


def aggr(con, *args):
    """gpu_aggregate's first row (sum, count, rows, max, typeof(max)) or the error."""
    sql = ("SELECT sum, count, rows, max, typeof(max) FROM gpu_aggregate(%s)"
           % ", ".join("?" * len(args)))
    try:
        return tuple(con.execute(sql, args).fetchone())
    except sqlite3.Error as e:
        return ("error", str(e))


def ref(con, x, table="t", where=None):
    sql = "SELECT sum(%s), count(%s), count(*), max(%s), typeof(max(%s)) FROM %s%s" % (
        x, x, x, x, table, " WHERE " + where if where else "")
    try:
        return tuple(con.execute(sql).fetchone())
    except sqlite3.Error as e:
        return ("error", "gpu_aggregate: " + str(e))


def expect(rep, name, con, args, want, path=None, why=None):
    got = aggr(con, *args)
    ls = last_scan(con)
    ok = got == want
    detail = "got %r want %r" % (got, want)
    if ok and path is not None and ls["path"] != path:
        ok, detail = False, "path %r, want %r (why %r)" % (ls["path"], path, ls["why"])
    if ok and why is not None and why not in ls["why"]:
        ok, detail = False, "why %r lacks %r" % (ls["why"], why)
    return rep.check(name, ok, detail)


# ---------------------------------------------------------------- defect 1

def section_detach(rep):
    for journal in ("wal", "delete"):
        path = fresh("detach_%s.db" % journal, journal, rows=3,
                     setup=["UPDATE t SET x = id"])
        con = connect(":memory:")
        con.execute("ATTACH ? AS aux", (path,))
        con.execute("SELECT gpu_cache('aux.t', 'x')")
        rep.check("detach_%s_cached" % journal, aggr(con, "aux.t", "x")[0] == 6
                  and last_scan(con)["path"] == "cache", repr(last_scan(con)))
        con.execute("DETACH aux")
        w = sqlite3.connect(path, isolation_level=None)
        w.execute("UPDATE t SET x = x * 100")
        w.close()
        con.execute("ATTACH ? AS aux", (path,))
        want = ref(con, "x", "aux.t")
        # (the file's identity tells; where the new pager is not at the old
        # address, as under ASan's allocator, the address tells first)
        expect(rep, "detach_%s_reattached_not_cached" % journal, con, ("aux.t", "x"), want,
               why="the entry is stale")
        rep.check("detach_%s_sum" % journal, want[0] == 600, repr(want))
        # untouched across a re-attach: stale too (a new database), never wrong
        con.execute("SELECT gpu_cache('aux.t', 'x')")
        con.execute("DETACH aux")
        con.execute("ATTACH ? AS aux", (path,))
        got = aggr(con, "aux.t", "x")
        rep.check("detach_%s_untouched_same_answer" % journal, got == ref(con, "x", "aux.t"),
                  repr(got))
        # an entry of an attached file still answers while nothing moves
        con.execute("SELECT gpu_cache('aux.t', 'x')")
        expect(rep, "detach_%s_attached_answers" % journal, con, ("aux.t", "x"),
               ref(con, "x", "aux.t"), path="cache")
        con.close()


# ---------------------------------------------------------------- defect 2

def section_authorizer(rep):
    path = fresh("auth.db")
    con = connect(path)
    want_plain = ref(con, "x")

    def ignore_x(action, a1, a2, db, trigger):
        if action == sqlite3.SQLITE_READ and a1 == "t" and a2 == "x":
            return sqlite3.SQLITE_IGNORE
        return sqlite3.SQLITE_OK

    con.set_authorizer(ignore_x)
    want = ref(con, "x")
    rep.check("auth_reference_reads_null", want[0] is None and want[1] == 0, repr(want))
    expect(rep, "auth_ignore_column_parallel", con, ("t", "x"), want, path="serial",
           why="authorizer")
    expect(rep, "auth_ignore_column_other_expr", con, ("t", "y"), ref(con, "y"),
           path="parallel")
    # the cache: loaded under the authorizer (on the caller), its answers are
    # the caller's reads
    con.execute("SELECT gpu_cache('t', 'x, y')")
    expect(rep, "auth_cache_loaded_under_authorizer", con, ("t", "x"), want)
    con.set_authorizer(None)
    expect(rep, "auth_cache_authorizer_removed", con, ("t", "x"), want_plain,
           why="authorizer")
    # loaded without one, then the authorizer comes: no cached answer
    con.execute("SELECT gpu_cache('t', 'x, y')")
    expect(rep, "auth_cache_plain_load", con, ("t", "x"), want_plain, path="cache")
    con.set_authorizer(ignore_x)
    expect(rep, "auth_cache_authorizer_set_after_load", con, ("t", "x"), want,
           why="authorizer")
    con.set_authorizer(None)
    con.execute("SELECT gpu_cache_drop()")

    # a function turned into NULL
    def ignore_abs(action, a1, a2, db, trigger):
        if action == sqlite3.SQLITE_FUNCTION and a2 == "abs":
            return sqlite3.SQLITE_IGNORE
        return sqlite3.SQLITE_OK

    con.set_authorizer(ignore_abs)
    expect(rep, "auth_ignore_function", con, ("t", "abs(x)"), ref(con, "abs(x)"),
           path="serial", why="authorizer")

    # a denied column: SQLite's own error, on every path
    def deny_x(action, a1, a2, db, trigger):
        if action == sqlite3.SQLITE_READ and a2 == "x":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    con.set_authorizer(deny_x)
    got, want = aggr(con, "t", "x"), ref(con, "x")
    rep.check("auth_deny_error", got[0] == "error" and got == want, repr((got, want)))
    con.set_authorizer(None)
    expect(rep, "auth_removed_parallel_again", con, ("t", "x"), want_plain, path="parallel")
    con.close()


def section_limits(rep):
    path = fresh("limits.db")
    con = connect(path)
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000000)
    want = ("error", "gpu_aggregate: string or blob too big")
    got = aggr(con, "t", "length(zeroblob(300000000))", "id < 3")
    rep.check("limit_length_reaches_workers", got == want, repr(got))
    rep.check("limit_length_reference", ref(con, "length(zeroblob(300000000))",
                                            where="id < 3") == want, "")
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000000000)
    expect(rep, "limit_length_raised_again", con,
           ("t", "length(zeroblob(300000000))", "id < 3"),
           ref(con, "length(zeroblob(300000000))", where="id < 3"), path="parallel")
    # a pooled worker that carried a low limit gets the next caller's
    other = connect(path)
    expect(rep, "limit_other_connection", other,
           ("t", "length(zeroblob(300000000))", "id < 3"),
           ref(other, "length(zeroblob(300000000))", where="id < 3"), path="parallel")
    other.close()
    con.close()


def section_progress(rep):
    path = fresh("progress.db")
    con = connect(path)
    calls = [0]

    def count(stop):
        def handler():
            calls[0] += 1
            return 1 if stop else 0
        return handler

    con.set_progress_handler(count(False), 1000)
    want = ref(con, "x")
    expect(rep, "progress_parallel_answer", con, ("t", "x"), want, path="parallel")
    ls = last_scan(con)
    rep.check("progress_probed_during_scan", ls.get("progress_probes", 0) >= 1, repr(ls))
    # a handler that stops every statement stops the scan too, as SQLite
    con.set_progress_handler(count(True), 1000)
    got = aggr(con, "t", "x")
    rep.check("progress_handler_stops_scan", got == ("error", "interrupted"), repr(got))
    rep.check("progress_handler_stops_reference",
              one(con, "SELECT sum(x) FROM t") == ("error", "interrupted"), "")
    con.set_progress_handler(None, 0)
    expect(rep, "progress_removed", con, ("t", "x"), want, path="parallel")
    con.close()


# ---------------------------------------------------------------- defect 3

def section_snapshot(rep):
    path = fresh("snapshot.db")
    con = connect(path)
    cur = con.execute("SELECT x FROM t")
    cur.fetchone()  # a statement in progress: the connection reads snapshot S1
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("UPDATE t SET x = x + 1000")  # S2
    w.close()
    want = ref(con, "x")
    expect(rep, "snapshot_open_cursor", con, ("t", "x"), want, path="serial",
           why="another statement")
    cur.close()
    con.execute("SELECT 1")  # (the cursor's statement is reset)
    want2 = ref(con, "x")
    rep.check("snapshot_cursor_closed_sees_s2", want2 != want, repr((want, want2)))
    expect(rep, "snapshot_cursor_closed_parallel", con, ("t", "x"), want2, path="parallel")
    con.close()


# ---------------------------------------------------------------- defect 4

def section_writing(rep):
    results = {}
    for cached in (0, 1):
        path = fresh("writing_%d.db" % cached, rows=5, setup=["UPDATE t SET x = 1"])
        con = connect(path)
        if cached:
            con.execute("SELECT gpu_cache('t', 'x, id')")
            aggr(con, "t", "x", "id < 3")
            rep.check("writing_cache_answers_outside", last_scan(con)["path"] == "cache",
                      repr(last_scan(con)))
        con.execute("UPDATE t SET x = (SELECT sum FROM gpu_aggregate('t', 'x', "
                    "'id < ' || t.id)) WHERE id > 1")
        results[cached] = [r[0] for r in con.execute("SELECT x FROM t ORDER BY id")]
        con.close()
    rep.check("writing_uncached", results[0] == [1, 1, 2, 4, 8], repr(results))
    rep.check("writing_cached_same", results[1] == results[0], repr(results))
    path = fresh("writing_why.db", rows=5)
    con = connect(path)
    con.execute("SELECT gpu_cache('t', 'x')")
    con.execute("BEGIN")
    con.execute("UPDATE t SET y = y")  # a write transaction; x untouched
    aggr(con, "t", "x")
    ls = last_scan(con)
    rep.check("writing_txn_why", ls["path"] != "cache", repr(ls))
    con.execute("ROLLBACK")
    con.close()


# ---------------------------------------------------------------- defect 5

def section_names(rep):
    path = fresh("names.db", setup=["CREATE TABLE v(x)",
                                    "INSERT INTO v SELECT x FROM t",
                                    "CREATE TABLE u(x)", "INSERT INTO u VALUES (3)"])
    con = connect(path)
    con.execute("CREATE TEMP TABLE v(x)")
    con.execute("INSERT INTO temp.v VALUES (1)")
    expect(rep, "names_temp_shadows_target", con, ("main.v", "x", "x IN v"),
           ref(con, "x", "main.v", "x IN v"), path="serial", why="also a table of")
    aux = fresh("names_aux.db", setup=["CREATE TABLE u(x)", "INSERT INTO u SELECT x FROM t"])
    con.execute("ATTACH ? AS aux", (aux,))
    expect(rep, "names_main_schema_from_aux", con, ("aux.u", "x", "x IN main.u"),
           ref(con, "x", "aux.u", "x IN main.u"), path="serial", why="schema main")
    expect(rep, "names_target_itself", con, ("aux.t", "x", "x IN (1, 2)"),
           ref(con, "x", "aux.t", "x IN (1, 2)"), path="parallel")
    con.close()


# ---------------------------------------------------------------- defect 6

def section_functions(rep):
    path = fresh("functions.db")
    con = connect(path)
    con.execute("UPDATE t SET y = y WHERE id = 1")  # changes() = 1
    expect(rep, "fn_changes", con, ("t", "x", "changes() = 1"),
           ref(con, "x", where="changes() = 1"), path="serial", why="changes()")
    con.execute("CREATE TABLE other(a)")
    con.execute("INSERT INTO other VALUES (1)")  # last_insert_rowid() = 1
    con.execute("UPDATE t SET y = y WHERE id = 1")
    expect(rep, "fn_last_insert_rowid", con, ("t", "x", "id <= last_insert_rowid() * %d" % ROWS),
           ref(con, "x", where="id <= last_insert_rowid() * %d" % ROWS), path="serial",
           why="last_insert_rowid()")
    aggr(con, "t", "random()")
    rep.check("fn_random_serial", last_scan(con)["path"] == "serial", repr(last_scan(con)))
    for label, x in (("now", "julianday('now')"), ("now_upper", "unixepoch('NOW', '+1 day')"),
                     ("no_args", "date()"), ("nested_no_args", "date(julianday())"),
                     ("dq_now", 'julianday("now")'), ("current", "current_timestamp")):
        got = con.execute("SELECT min = max FROM gpu_aggregate('t', ?)", (x,)).fetchone()
        ls = last_scan(con)
        rep.check("fn_time_%s_serial" % label, ls["path"] == "serial" and
                  "the text uses" in ls["why"], repr(ls))
        if label in ("now", "no_args", "current"):
            rep.check("fn_time_%s_one_value" % label, got == (1,), repr(got))
    for label, x in (("literal_date", "julianday('2026-12-01')"),
                     ("literal_modifier", "date('2026-12-01', '+1 day')"),
                     ("column_named_date", "x + 1"),
                     # issue 37: over columns, pinned to one time
                     ("column", "strftime('%s', x)"), ("quoted_column", 'julianday("x")'),
                     ("nested", "datetime(abs(-1))"), ("modifier_column", "julianday(x, y || ' days')")):
        expect(rep, "fn_time_%s_parallel" % label, con, ("t", x), ref(con, x), path="parallel")
    con.close()


# ---------------------------------------------------------------- issue 37

def section_pinned(rep):
    """One time in every group across 16 workers (tiny pieces)."""
    path = fresh("pinned.db", setup=["UPDATE t SET y = CASE id % 4 WHEN 0 THEN 'now' WHEN 1 THEN 'NOW' "
                                     "WHEN 2 THEN ' now ' ELSE '2026-02-03 04:05:06' END"])
    con = connect(path)
    con.execute("select gpuagg_config('threads', 16)")
    text = ("SELECT id % 61 AS g, min(julianday(y)), max(julianday(y)), min(strftime('%s', y)), "
            "max(strftime('%s', y)), min(date(y)), max(date(y)), count(julianday(y)), "
            "min(julianday(\"y\")), max(julianday([y])) FROM t WHERE y <> '2026-02-03 04:05:06' GROUP BY g")
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % text.replace("'", "''"))
    os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "37"
    try:
        before = con.execute("SELECT julianday('now')").fetchone()[0]
        got = con.execute("SELECT * FROM temp.q").fetchall()
        after = con.execute("SELECT julianday('now')").fetchone()[0]
    finally:
        del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
    ls = last_scan(con)
    rep.check("pinned_parallel_16", ls["path"] == "parallel" and ls.get("threads") == 16 and
              ls.get("pieces", 0) > 100, repr(ls))
    jd = {r[1] for r in got} | {r[2] for r in got} | {r[8] for r in got} | {r[9] for r in got}
    secs = {r[3] for r in got} | {r[4] for r in got}
    days = {r[5] for r in got} | {r[6] for r in got}
    rep.check("pinned_one_time", len(got) == 61 and len(jd) == 1 and len(secs) == 1 and len(days) == 1,
              "julianday %r strftime %r date %r" % (sorted(jd)[:4], sorted(secs)[:4], sorted(days)[:4]))
    j = next(iter(jd))
    rep.check("pinned_callers_time", j is not None and before <= j <= after and
              secs == {str(int((j - 2440587.5) * 86400 + 1e-7))},
              "pinned %r between %r and %r? %r" % (j, before, after, secs))
    # the serial answer on the same connection: the same rows read the time
    # (' now ' is no time: NULL), each group at one time of its own step
    ser = con.execute(text).fetchall()
    rep.check("pinned_same_rows_as_serial", [(r[0], r[7]) for r in sorted(got)] ==
              [(r[0], r[7]) for r in sorted(ser)] and all(before <= r[1] <= after + 1 for r in ser),
              "got %r serial %r" % (sorted(got)[:3], sorted(ser)[:3]))
    con.execute("DROP TABLE temp.q")
    # a parameter bound to 'now', or a quoted column alone, under a date
    # function: pinned too
    for label, ptext, args in (
            ("parameter", "SELECT id % 61 AS g, min(julianday(?1)), max(julianday(?1, ?2)) FROM t GROUP BY g",
             ("now", "+0 days")),
            ("quoted", 'SELECT id % 61 AS g, min(julianday("y")), max(julianday([y])) FROM t GROUP BY g', ())):
        con.execute("CREATE VIRTUAL TABLE temp.qp USING gpu_query('%s')" % ptext.replace("'", "''"))
        os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "37"
        try:
            got = con.execute("SELECT * FROM temp.qp(%s)" % ", ".join("?" * len(args)), args).fetchall()
        finally:
            del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
        ls = last_scan(con)
        vals = {r[1] for r in got} | {r[2] for r in got}
        rep.check("pinned_%s_now" % label, ls["path"] == "parallel" and len(got) == 61 and
                  len(vals - {2461074.6702083335}) == 1, "%r %r" % (ls, sorted(got)[:4]))
        con.execute("DROP TABLE temp.qp")
    # issue 37 (review): a subquery whose view reads 'now' (its text shows
    # no date function) reads the rows' pinned time, as SQLite's one step
    # reads one time: every row holding 'now' or 'NOW' matches it
    con.execute("CREATE VIEW IF NOT EXISTS vnow AS SELECT julianday('now') AS j")
    sub = "SELECT id % 61 AS g, count(*) FROM t WHERE julianday(y) = (SELECT j FROM vnow) GROUP BY g"
    want = con.execute(sub).fetchall()
    for rep_i in range(3):
        con.execute("CREATE VIRTUAL TABLE temp.qs USING gpu_query('%s')" % sub.replace("'", "''"))
        got = con.execute("SELECT * FROM temp.qs").fetchall()
        ls = last_scan(con)
        con.execute("DROP TABLE temp.qs")
        if not (ls["path"] == "parallel" and sorted(got) == sorted(want)):
            break
    rep.check("pinned_subquery_view_now", ls["path"] == "parallel" and sorted(got) == sorted(want) and
              sum(r[1] for r in got) == con.execute("SELECT count(*) FROM t WHERE lower(y) = 'now'").fetchone()[0],
              "%r got %r want %r" % (ls, sorted(got)[:3], sorted(want)[:3]))
    # the caller's own part (the post query) reads the time too: serial
    post = "SELECT date(y) AS k, max(julianday(y)), count(*) FROM t GROUP BY k"
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % post.replace("'", "''"))
    got = con.execute("SELECT * FROM temp.q").fetchall()
    ls = last_scan(con)
    rep.check("pinned_post_reads_time_serial", ls["path"] == "serial" and "a row holds 'now'" in ls["why"]
              and len(got) == 3, "%r %r" % (ls, got))
    con.execute("DROP TABLE temp.q")
    # no row read holds 'now' (the filter; ' now ' is no time): parallel
    post = post.replace(" GROUP", " WHERE y < '3000' GROUP")
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % post.replace("'", "''"))
    got = con.execute("SELECT * FROM temp.q").fetchall()
    ls = last_scan(con)
    want = con.execute(post.replace("max(", "gpu_max(")).fetchall()
    rep.check("pinned_post_no_now_parallel", ls["path"] == "parallel" and sorted(got, key=repr) ==
              sorted(want, key=repr) and len(got) == 2, "%r %r %r" % (ls, got, want))
    con.execute("DROP TABLE temp.q")
    # a path that cannot pin (the shim refused: a test fault) is serial
    os.environ["GPUAGG_PIN_FAULT"] = "1"
    try:
        got = aggr(con, "t", "julianday(y)")
    finally:
        del os.environ["GPUAGG_PIN_FAULT"]
    ls = last_scan(con)
    rep.check("pinned_fault_serial", ls["path"] == "serial" and "cannot be shimmed" in ls["why"] and
              got[1] == 15000, "%r %r" % (ls, got))
    con.close()


# ------------------------------------------------- issue 37 (session 3): VFS names

class _Vfs(ctypes.Structure):
    _fields_ = [("iVersion", ctypes.c_int), ("szOsFile", ctypes.c_int), ("mxPathname", ctypes.c_int),
                ("pNext", ctypes.c_void_p), ("zName", ctypes.c_char_p), ("pAppData", ctypes.c_void_p)] + \
               [(f, ctypes.c_void_p) for f in (
                   "xOpen", "xDelete", "xAccess", "xFullPathname", "xDlOpen", "xDlError", "xDlSym", "xDlClose",
                   "xRandomness", "xSleep", "xCurrentTime", "xGetLastError", "xCurrentTimeInt64",
                   "xSetSystemCall", "xGetSystemCall", "xNextSystemCall")]


_OPEN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                         ctypes.c_void_p)
_TIME64 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64))
_TIME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double))
_KEEP = []  # VFS structs and callbacks live as long as the process (pooled connections use them)


def make_vfs(lib, name, jd):
    """A copy of the unix VFS named `name` whose time is the Julian day jd
    and whose xOpen counts its calls (opens[0])."""
    unix = ctypes.cast(lib.sqlite3_vfs_find(b"unix"), ctypes.POINTER(_Vfs)).contents
    v = _Vfs.from_buffer_copy(unix)
    v.pNext = None
    v.zName = name.encode()
    opens = [0]
    real_open = _OPEN(unix.xOpen)

    def x_open(vfs, z, f, flags, out):
        opens[0] += 1
        return real_open(vfs, z, f, flags, out)

    def x_time64(vfs, out):
        out[0] = int(round(jd * 86400000))
        return 0

    def x_time(vfs, out):
        out[0] = jd
        return 0
    cbs = (_OPEN(x_open), _TIME64(x_time64), _TIME(x_time))
    v.xOpen, v.xCurrentTimeInt64, v.xCurrentTime = [ctypes.cast(c, ctypes.c_void_p).value for c in cbs]
    _KEEP.append((v, cbs, real_open))
    return v, opens


def section_vfs_names(rep):
    """pintime.c rule 5: the workers reach the caller's VFS itself."""
    lib = ctypes.CDLL("libsqlite3.so.0")  # the library this Python's sqlite3 uses
    lib.sqlite3_vfs_find.restype = ctypes.c_void_p
    lib.sqlite3_vfs_find.argtypes = [ctypes.c_char_p]
    lib.sqlite3_vfs_register.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.sqlite3_vfs_unregister.argtypes = [ctypes.c_void_p]
    setup = ["UPDATE t SET y = CASE WHEN id % 4 = 0 THEN 'now' ELSE '2000-01-01' END"]
    f1, f2 = fresh("vfs1.db", journal="delete", setup=setup), fresh("vfs2.db", journal="delete", setup=setup)
    jd_a, jd_b = 2451911.0, 2452308.25  # 2001-01-01 12:00, 2002-02-02 18:00
    a, a_opens = make_vfs(lib, "gpuagg-test-vfs", jd_a)
    b, b_opens = make_vfs(lib, "gpuagg-test-vfs", jd_b)
    lib.sqlite3_vfs_register(ctypes.byref(a), 0)
    c1 = connect("file:%s?vfs=gpuagg-test-vfs" % f1, uri=True)

    def call(con, threads, x, jd, label, moves, still):
        """con's call at `threads` threads: parallel, the caller's time (jd),
        files opened through `moves` (if it opens any) and never through `still`."""
        con.execute("select gpuagg_config('threads', ?)", (threads,))
        before = (moves[0], still[0])
        got = aggr(con, "t", x)
        ls = last_scan(con)
        want = ref(con, x)  # the caller's own: its VFS's time
        ok = ls["path"] == "parallel" and got == want and still[0] == before[1] and \
            (jd is None or got[3] == jd)
        rep.check("vfs_names_" + label, ok, "got %r want %r; %r; opens through the caller's VFS %d -> %d, "
                  "through the other %d -> %d" % (got, want, ls, before[0], moves[0], before[1], still[0]))

    call(c1, 2, "julianday(y)", jd_a, "first", a_opens, b_opens)
    rep.check("vfs_names_first_opens", a_opens[0] > 0, "no file opened through the caller's VFS")
    # another VFS under the same name: sqlite3_vfs_find now gives it
    lib.sqlite3_vfs_register(ctypes.byref(b), 0)
    rep.check("vfs_names_shadowed", lib.sqlite3_vfs_find(b"gpuagg-test-vfs") == ctypes.addressof(b),
              "sqlite3_vfs_find does not give the new VFS")
    call(c1, 4, "julianday(y)", jd_a, "reregistered_pinned", a_opens, b_opens)
    call(c1, 6, "x", None, "reregistered_plain", a_opens, b_opens)
    c2 = connect("file:%s?vfs=gpuagg-test-vfs" % f2, uri=True)  # opened through b
    call(c2, 2, "julianday(y)", jd_b, "second_caller_pinned", b_opens, a_opens)
    rep.check("vfs_names_second_opens", b_opens[0] > 0, "no file opened through the second caller's VFS")
    # both unregistered: each caller keeps its own
    lib.sqlite3_vfs_unregister(ctypes.byref(b))
    lib.sqlite3_vfs_unregister(ctypes.byref(a))
    call(c1, 8, "julianday(y)", jd_a, "unregistered_pinned", a_opens, b_opens)
    call(c1, 10, "x", None, "unregistered_plain", a_opens, b_opens)
    call(c2, 4, "julianday(y)", jd_b, "unregistered_second", b_opens, a_opens)
    # the first registered again: the second caller still reads its own
    lib.sqlite3_vfs_register(ctypes.byref(a), 0)
    call(c2, 6, "x", None, "registered_again_plain", b_opens, a_opens)
    call(c2, 8, "julianday(y)", jd_b, "registered_again_pinned", b_opens, a_opens)
    c1.close()
    c2.close()
    lib.sqlite3_vfs_unregister(ctypes.byref(a))


# ---------------------------------------------------------------- defect 11

def section_reverse(rep):
    path = fresh("reverse.db", rows=2, setup=["UPDATE t SET x = 5 WHERE id = 1",
                                              "UPDATE t SET x = 5.0 WHERE id = 2"])
    for threads in (1, 2):
        con = connect(path)
        con.execute("select gpuagg_config('threads', ?)", (threads,))
        con.execute("PRAGMA reverse_unordered_selects = 1")
        got = aggr(con, "t", "x")
        rep.check("reverse_first_row_wins_threads%d" % threads,
                  got[3:] == (5, "integer"), repr(got))
        rep.check("reverse_pragma_given_back_threads%d" % threads,
                  one(con, "PRAGMA reverse_unordered_selects") == 1, "")
        got = con.execute("SELECT grp, typeof(max) FROM gpu_aggregate('t', 'x', NULL, "
                          "'1')").fetchall()
        rep.check("reverse_grouped_threads%d" % threads, got == [(1, "integer")], repr(got))
        con.close()


def section_uncommitted(rep):
    path = fresh("shared.db", journal="delete", rows=3, setup=["UPDATE t SET x = id"])
    uri = "file:%s?cache=shared" % path
    try:
        a = connect(uri, uri=True)
        b = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as e:
        rep.skip("uncommitted_shared_cache", "no shared cache: %s" % e)
        return
    a.execute("SELECT gpu_cache('t', 'x')")
    a.execute("PRAGMA read_uncommitted = 1")
    b.execute("BEGIN")
    b.execute("UPDATE t SET x = x * 6")
    want = ref(a, "x")
    rep.check("uncommitted_reference_reads_36", want[0] == 36, repr(want))
    expect(rep, "uncommitted_cache_steps_aside", a, ("t", "x"), want, why="read_uncommitted")
    a.execute("SELECT gpu_cache_drop()")
    expect(rep, "uncommitted_parallel_steps_aside", a, ("t", "x"), want, path="serial",
           why="read_uncommitted")
    b.execute("ROLLBACK")
    a.close()
    b.close()


# ---------------------------------------------------- issue 36, defect 4

def section_modules(rep):
    path = fresh("modules.db", setup=["ALTER TABLE t ADD COLUMN json_each",
                                      "UPDATE t SET json_each = id % 5"])
    con = connect(path)
    # connection state the workers do not share; each filter holds on the
    # caller only, so a worker's answer would be 0 rows
    con.execute("PRAGMA busy_timeout = 1234")
    con.execute("PRAGMA cache_size = -3000")
    for label, where, name in (
            ("busy_timeout", "1234 IN pragma_busy_timeout", "pragma_busy_timeout"),
            ("cache_size", "-3000 IN pragma_cache_size", "pragma_cache_size"),
            ("module_list", "'gpu_query' IN pragma_module_list", "pragma_module_list"),
            ("quoted", '\'gpu_query\' IN "PRAGMA_MODULE_LIST"', "pragma_module_list")):
        want = ref(con, "x", where=where)
        rep.check("modules_%s_reference_holds" % label, want[2] == ROWS, repr(want))
        expect(rep, "modules_%s_serial" % label, con, ("t", "x", where), want,
               path="serial", why=name)
        # gpu_query: the same text, the same answer and path
        sql = "SELECT count(*), sum(x) FROM t WHERE " + where
        con.execute("DROP TABLE IF EXISTS temp.mq")
        con.execute("CREATE VIRTUAL TABLE temp.mq USING gpu_query('%s')" % sql.replace("'", "''"))
        got = con.execute("SELECT * FROM mq").fetchall()
        ls = last_scan(con)
        rep.check("modules_%s_gpu_query" % label,
                  got == con.execute(sql).fetchall() and ls["path"] == "serial" and
                  name in ls["why"], repr((got, ls)))
    # the allow-list: json_each and json_tree are pure functions of their
    # arguments; a name of theirs (here a column) keeps the parallel path
    expect(rep, "modules_json_each_name_parallel", con, ("t", "json_each", "json_each > 1"),
           ref(con, "json_each", where="json_each > 1"), path="parallel")
    con.close()


# ---------------------------------------------------- issue 36, defect 7

def section_dqs(rep):
    path = fresh("dqs.db", setup=["ALTER TABLE t ADD COLUMN r TEXT",
                                  "UPDATE t SET r = CASE id % 3 WHEN 0 THEN 'North' "
                                  "WHEN 1 THEN 'South' ELSE 'north' END"])
    con = connect(path)
    texts = [
        # two words differing in case are two strings; "R" is the column r
        'SELECT r, max("Hello"), max("hello"), min(\'hello\'), max("R"), max("HELLO") '
        'FROM t GROUP BY r ORDER BY r',
        # an alias is not resolved in the select list (a string there), but is
        # in HAVING: the two max("hello") are two values
        'SELECT r AS hello, max("hello"), count(*) FROM t GROUP BY r '
        'HAVING max("hello") > \'O\' ORDER BY 1',
        'SELECT r AS hello, max("Hello"), sum(x) FROM t GROUP BY r ORDER BY 1',
        'SELECT max("it\'\'s"), max(\'it\'\'s\'), min("IT\'\'S"), count(*) FROM t',
    ]
    for i, sql in enumerate(texts):
        con.execute("DROP TABLE IF EXISTS temp.dq")
        con.execute("CREATE VIRTUAL TABLE temp.dq USING gpu_query('%s')" % sql.replace("'", "''"))
        got = con.execute("SELECT * FROM dq").fetchall()
        want = con.execute(sql).fetchall()
        ls = last_scan(con)
        rep.check("dqs_text%d" % i, got == want and ls["path"] == "parallel",
                  "got %r want %r (%r)" % (got[:3], want[:3], ls))
    con.close()


def main():
    rep = Reporter("trust")
    for section in (section_detach, section_authorizer, section_limits, section_progress,
                    section_snapshot, section_writing, section_names, section_functions,
                    section_pinned, section_vfs_names, section_reverse, section_uncommitted, section_modules, section_dqs):
        section(rep)
    rep.finish()


if __name__ == "__main__":
    main()
