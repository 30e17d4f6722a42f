"""test_cache_append.py — appends extend a cache entry (issue 40, part 4).

When the only change to a table since its entry's state is rows appended past
its largest rowid, proven from the WAL's frames (planner/cache_extend.c), the
next cached query or gpu_cache call extends the entry with the new rows
instead of reloading it (docs/gpu_cache.md, "Appends").  Every answer here is
compared with SQLite's own on the same connection (values and types), and
each case checks whether the entry was extended (last_scan.why, the entry's
"appends") or not, and why:

  - appends from this connection, another connection, another process; new
    TEXT values sorting before and after the old ones (codes rewritten);
    several extensions in a row; a gpu_cache call that extends;
  - adversarial, each never extended and answered as SQLite does: an UPDATE
    of one row below the old largest rowid after an append, a DELETE (old
    leaf, right-edge leaf), INSERT OR REPLACE deleting an old row through a
    UNIQUE conflict, an explicit small rowid, a row appended by one
    extension then updated, VACUUM, a schema change, a WAL checkpointed
    away or restarted between checks, blob I/O on an old row, a rollback
    journal;
  - a read transaction open since before the append: not proven yet (the
    entry is kept, not marked stale), extended once the connection is seen
    outside a transaction;
  - GPU entries (GPUAGG_TEST_GPU=1: the fake backend, or a GPU under make
    test-gpu; CACHE_DEVICES=gpu for them alone): every case above on a GPU
    entry, which extends under the same proof (engine/cache/cache_append.h
    rule 5), and section_gpu's: the device columns grown in place and
    re-copied, several times in a row, with the structures a GPU entry
    derives from its rows checked by GPU_QUERIES (the whole-column layout
    after a REAL among INTEGERs, group dictionaries, DISTINCT's ranges, TEXT
    codes, NULL bits across partial words, medians and variances), the
    budget's books, a budget that cannot hold the copy, the many-groups
    path, a caller with device 'cpu', a star join over an extended fact,
    and (fake backend only) a copy the device memory cannot hold.
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_append_")
PYTHON = os.environ.get("PYTHON") or sys.executable
N = int(os.environ.get("APPEND_ROWS", "6000"))

# exact in binary floating point (halves of small integers): SQLite's own
# sum() is the exact sum, so the plain SELECT is the reference
QUERIES = [
    "SELECT k, count(*), sum(x), min(n), max(n), min(s), max(s), sum(n), avg(x) "
    "FROM t GROUP BY k ORDER BY k",
    "SELECT count(*), sum(x), max(s), min(k) FROM t WHERE s >= 'b' AND n % 3 = 1",
    "SELECT s, count(*), total(x) FROM t WHERE k < 'k5' OR x > 100 GROUP BY s ORDER BY s",
]


def connect(path, device="cpu"):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)").fetchall()
    con.execute("SELECT gpuagg_config('device', ?)", (device,)).fetchall()
    return con


def info(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchall()[0][0])


def entry(con):
    es = info(con)["cache"]["entries"]
    return es[0] if es else None


def rows_of(rs):
    return [tuple(typed_key(v) for v in r) for r in rs]


def make(path, mode, n=N):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("PRAGMA journal_mode=%s" % mode)
    w.execute("CREATE TABLE t(x REAL, k TEXT, n INTEGER, s TEXT, u INTEGER UNIQUE, b BLOB)")
    w.execute(append_sql(1, n))
    w.close()


def append_sql(lo, hi, tag="m"):
    return ("INSERT INTO t SELECT value * 0.5, 'k' || (value %% 7), value %% 1000 - 300, "
            "'%s' || substr('00' || (value %% 37), -3), value, zeroblob(8) FROM "
            "(WITH RECURSIVE r(value) AS (SELECT %d UNION ALL SELECT value + 1 FROM r "
            "WHERE value < %d) SELECT value FROM r)" % (tag, lo, hi))


class Case:
    """One database, one connection holding its entry, the gpu_query tables."""

    def __init__(self, rep, name, mode="wal", device="cpu", n=N):
        self.rep, self.name, self.device = rep, name, device
        self.path = os.path.join(TMP, "%s_%s.db" % (name, device))
        make(self.path, mode, n)
        self.con = connect(self.path, device)
        # a committed frame in the WAL: the state it proves (a WAL
        # checkpointed away at the load proves none, docs/gpu_cache.md)
        self.con.execute("PRAGMA user_version = 1")
        self.rows = self.con.execute("SELECT gpu_cache('t', 'x, k, n, s')").fetchall()[0][0]
        for i, q in enumerate(QUERIES):
            self.con.execute("CREATE VIRTUAL TABLE temp.q%d USING gpu_query(%s)"
                             % (i, "'" + q.replace("'", "''") + "'"))
        self.step = 0

    def ask(self, tag, want, note=True, con=None, why_has=None):
        """Every query against SQLite's answer; want: 'extended', 'cache'
        (answered from the entry, nothing to extend), 'pending' or 'no'."""
        con = con or self.con
        self.step += 1
        for i, q in enumerate(QUERIES):
            if note:
                info(con)  # the connection seen outside a transaction
            got = con.execute("SELECT * FROM q%d" % i).fetchall()
            ls = info(con)["last_scan"]
            ref = con.execute(q).fetchall()
            name = "%s %s %s q%d" % (self.device, self.name, tag, i)
            self.rep.check(name + " answer", rows_of(got) == rows_of(ref),
                           "%r != %r (%s)" % (got[:3], ref[:3], ls.get("why")))
            why = ls.get("why") or ""
            if i == 0:
                if want == "extended":
                    ok = ls.get("path") == "cache" and "extended by" in why
                elif want == "cache":
                    ok = ls.get("path") == "cache" and "extended" not in why
                elif want == "pending":
                    ok = ls.get("path") != "cache" and "may have begun before" in why
                else:
                    ok = ls.get("path") != "cache" and "extended by" not in why
                    if why_has:
                        ok = ok and why_has in why
                self.rep.check(name + " " + want, ok, "%s: %s" % (ls.get("path"), why))

    def run(self, *stmts):
        for s in stmts:
            self.con.execute(s).fetchall()

    def close(self):
        self.con.close()


def section_appends(rep, device):
    c = Case(rep, "appends", device=device)
    c.ask("loaded", "cache")
    c.run(append_sql(N + 1, N + 60))
    c.ask("own append", "extended")
    c.ask("again", "cache")
    e = entry(c.con)
    rep.check("appends counted", e.get("appends") == 60 and e.get("extends") == 1
              and "extended by 60 rows" in e["how"], json.dumps(e))
    # new TEXT values sorting before every old one: codes rewritten
    c.run(append_sql(N + 61, N + 90, tag="a"))
    c.ask("new values before", "extended")
    c.run(append_sql(N + 91, N + 120, tag="z"))
    c.ask("new values after", "extended")
    # another connection of the process, then another process
    other = sqlite3.connect(c.path, isolation_level=None, timeout=30)
    other.execute(append_sql(N + 121, N + 400, tag="b"))
    c.ask("other connection", "extended")
    subprocess.run([PYTHON, "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                    "c.execute(sys.argv[2]); c.commit(); c.close()", c.path,
                    append_sql(N + 401, N + 3000, tag="c")], check=True)
    c.ask("other process", "extended")
    # a read transaction open since before the append: not proven yet
    other.execute(append_sql(N + 3001, N + 3010))
    # (q0 runs first: not proven; the gpuagg_info() after it sees the
    # connection idle, so q1 extends the entry, which q0 left current)
    c.ask("statement cached", "pending", note=False)
    e = entry(c.con)
    rep.check("%s pending keeps the entry" % device,
              e and e["rows"] == N + 3010 and e["current"], json.dumps(e))
    c.ask("seen idle", "cache")
    # gpu_cache with the entry's columns extends instead of a reload
    loads = info(c.con)["cache"]["loads"]
    other.execute(append_sql(N + 3011, N + 3020))
    got = c.con.execute("SELECT gpu_cache('t', 'x, k, n, s')").fetchall()[0][0]
    ic = info(c.con)["cache"]
    rep.check("gpu_cache extends", got == N + 3020 and ic["loads"] == loads
              and ic["entries"][0].get("appends") == 3020, "%r %s" % (got, json.dumps(ic)))
    c.ask("after gpu_cache", "cache")
    # a row appended by an earlier extension, then updated: its page is
    # recorded (cache_extend.c rule 5)
    other.execute("UPDATE t SET x = x + 1 WHERE rowid = %d" % (N + 200))
    c.ask("update of an appended row", "no", why_has="not extended")
    other.close()
    c.close()


def section_shared(rep, device):
    """Another connection of the process, sharing the entry, extends it
    (cache_extend.c rule 6) and becomes its owner; the loader then reads
    it as a shared entry."""
    c = Case(rep, "shared", device=device)
    # the process's loads so far (a cache kept from the sections before:
    # engine/cache/cache.c rule 7); this section's Case loaded once
    loads0 = info(c.con)["cache"]["loads"] - 1
    con2 = connect(c.path, device)
    for i, q in enumerate(QUERIES):
        con2.execute("CREATE VIRTUAL TABLE temp.q%d USING gpu_query(%s)"
                     % (i, "'" + q.replace("'", "''") + "'"))
    c.ask("second connection", "cache", con=con2)
    c.run(append_sql(N + 1, N + 500, tag="d"))
    c.ask("second connection extends", "extended", con=con2)
    e = entry(c.con)
    rep.check("shared extension owner", e and not e["mine"] and e["rows"] == N + 500,
              json.dumps(e))
    c.ask("loader reads it shared", "cache")
    con2.execute(append_sql(N + 501, N + 600, tag="e"))
    c.ask("loader extends again", "extended")
    c.ask("second again", "cache", con=con2)
    rep.check("shared loads", info(c.con)["cache"]["loads"] - loads0 == 1,
              json.dumps(info(c.con)["cache"]))
    con2.close()
    c.close()


def section_adversarial(rep, device):
    cases = [
        ("update below", ["UPDATE t SET x = x + 1 WHERE rowid = 10"], "wrote page"),
        ("delete old", ["DELETE FROM t WHERE rowid = 20"], "wrote page"),
        ("delete last", ["DELETE FROM t WHERE rowid = %d" % (N + 100)], "last lea"),
        ("update last", ["UPDATE t SET n = n + 1 WHERE rowid = %d" % (N + 100)],
         "last lea"),
        ("delete last old", ["DELETE FROM t WHERE rowid = %d" % N, append_sql(N + 101, N + 110)],
         "not extended"),
        ("replace unique old", ["INSERT OR REPLACE INTO t VALUES (1.5, 'k1', 7, 'm001', 5, x'00')"],
         "wrote page"),
        ("replace unique last", ["INSERT OR REPLACE INTO t VALUES (1.5, 'k1', 7, 'm001', %d, x'00')"
                                 % (N + 100)], "last lea"),
        ("small rowid", ["INSERT INTO t(rowid, x, k, n, s, u) VALUES (-5, 1, 'k1', 1, 'm1', -5)"],
         "wrote page"),
        ("reinsert in the last leaves",
         ["DELETE FROM t WHERE rowid = %d" % (N + 95), "SELECT gpu_cache('t', 'x, k, n, s')",
          "INSERT INTO t(rowid, x, k, n, s, u) VALUES (%d, 1, 'k1', 1, 'm1', -7)" % (N + 95)],
         "last lea"),
        ("vacuum", ["VACUUM"], "not extended"),
        ("schema", ["CREATE INDEX ti ON t(n)"], "not extended"),
        ("checkpoint truncate", ["PRAGMA wal_checkpoint(TRUNCATE)", append_sql(N + 201, N + 210)],
         "not extended"),
        ("checkpoint passive", ["PRAGMA wal_checkpoint(PASSIVE)", append_sql(N + 201, N + 210)],
         "reset"),
        ("restart", ["PRAGMA wal_checkpoint(RESTART)", append_sql(N + 201, N + 210)],
         "not extended"),
    ]
    for name, stmts, why in cases:
        c = Case(rep, name.replace(" ", "_"), device=device)
        c.run(append_sql(N + 1, N + 100))
        c.ask(name + " first append", "extended")
        c.run(*stmts)
        c.ask(name, "extended" if why is None else "no", why_has=why)
        c.close()
    # blob I/O on an old row: no statement counts it
    c = Case(rep, "blob", device=device)
    c.run(append_sql(N + 1, N + 100))
    c.run("UPDATE t SET b = x'00000000000000ff' WHERE rowid = 3")  # a blob to write in place
    c.run("SELECT gpu_cache('t', 'x, k, n, s')")  # reload: a state after that update
    c.ask("blob loaded", "cache")
    with c.con.blobopen("t", "b", 3) as blob:
        blob.write(b"\x01\x02")
    c.run(append_sql(N + 101, N + 110))
    c.ask("blob write", "no", why_has="wrote page")
    c.close()
    # blob I/O into an old row's overflow page (a cached TEXT past a page):
    # only the overflow page is written, never its leaf, and the record
    # holds no overflow page (cache_extend.c rule 4 reads its new version)
    c = Case(rep, "overflow", device=device)
    c.run("UPDATE t SET s = 'big' || printf('%.12000c', 'y') WHERE rowid = 5")
    c.run("SELECT gpu_cache('t', 'x, k, n, s')")  # a state with that row
    c.run(append_sql(N + 1, N + 100))
    c.ask("overflow first append", "extended")
    with c.con.blobopen("t", "s", 5) as blob:
        blob.seek(10000)
        blob.write(b"zz")
    c.run(append_sql(N + 101, N + 110))
    c.ask("overflow blob write", "no", why_has="wrote page")
    c.close()
    # rollback journal: never extended, says why
    c = Case(rep, "rollback", mode="delete", device=device)
    c.run(append_sql(N + 1, N + 100))
    c.ask("rollback journal", "no", why_has="rollback journal")
    c.close()


def q_not_extended(rep, con, tag, reason):
    """temp.q (count(*), sum(a), sum(b) of t), seen outside a transaction
    first: SQLite's answer, and the entry not extended, for `reason`."""
    info(con)
    got = con.execute("SELECT * FROM q").fetchall()
    why = info(con)["last_scan"].get("why") or ""
    ref = con.execute("SELECT count(*), sum(a), sum(b) FROM t").fetchall()
    rep.check(tag + " answer", got == ref, "%r != %r (%s)" % (got, ref, why))
    rep.check(tag + " not extended", "extended by" not in why and reason in why, why)


def section_truncate(rep, device):
    """DELETE without WHERE (OP_Clear) frees the table's leaves without
    writing them (secure_delete off or fast): no frame names them, so the
    proof must find them on the freelist (cache_extend.c rule 4).  The rows
    above lmax are put back in other pages (another table's freed ones) and
    a few appended: the old proof extended the entry, keeping every deleted
    row (a review's reproduction, session 6)."""
    for sd in ("OFF", "FAST"):
        path = os.path.join(TMP, "truncate_%s_%s.db" % (sd, device))
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        w = sqlite3.connect(path, isolation_level=None)
        w.execute("PRAGMA journal_mode=wal")
        w.execute("CREATE TABLE t(a INTEGER, b INTEGER)")
        w.execute("CREATE TABLE g(a INTEGER, b INTEGER)")
        w.execute("CREATE TABLE h(a BLOB)")

        def series(lo, hi, order="ASC"):
            return ("WITH RECURSIVE r(v) AS (SELECT %d UNION ALL SELECT v+1 FROM r "
                    "WHERE v<%d) SELECT v FROM r ORDER BY v %s" % (lo, hi, order))
        w.execute("INSERT INTO g SELECT v, v FROM (%s)" % series(1, 20000))
        w.execute("INSERT INTO t(rowid,a,b) SELECT v, v%%97, v*3 FROM (%s)" % series(1, 5000))
        con = connect(path, device)
        con.execute("PRAGMA user_version = 1")
        con.execute("SELECT gpu_cache('t', 'a, b')").fetchall()
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query("
                    "'SELECT count(*), sum(a), sum(b) FROM t')")
        con.execute("SELECT * FROM q").fetchall()
        w.execute("PRAGMA secure_delete=" + sd)
        w.execute("BEGIN")
        w.execute("INSERT INTO h VALUES (zeroblob(40000))")
        w.execute("DELETE FROM h")
        w.execute("DELETE FROM g")
        w.execute("DELETE FROM t")
        w.execute("INSERT INTO t(rowid,a,b) SELECT v, v%%97, v*3 FROM (%s)"
                  % series(2001, 5000, "DESC"))
        w.execute("INSERT INTO t(rowid,a,b) SELECT v, v%%97, v*3 FROM (%s)"
                  % series(5001, 5010))
        w.execute("COMMIT")
        q_not_extended(rep, con, "%s truncate secure_delete=%s" % (device, sd), "is free now")
        con.close()
        w.close()


def section_autovacuum(rep, device):
    """auto_vacuum moves pages at commit (cache_extend.c rule 1): an entry
    of such a file is never extended, and says why."""
    for av in ("FULL", "INCREMENTAL"):
        path = os.path.join(TMP, "autovacuum_%s_%s.db" % (av, device))
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        w = sqlite3.connect(path, isolation_level=None)
        w.execute("PRAGMA auto_vacuum=" + av)
        w.execute("PRAGMA journal_mode=wal")
        w.execute("CREATE TABLE t(a INTEGER, b INTEGER)")
        w.execute("INSERT INTO t SELECT value, value * 3 FROM (WITH RECURSIVE "
                  "r(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM r WHERE "
                  "value < 3000) SELECT value FROM r)")
        con = connect(path, device)
        con.execute("PRAGMA user_version = 1")
        con.execute("SELECT gpu_cache('t', 'a, b')").fetchall()
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query("
                    "'SELECT count(*), sum(a), sum(b) FROM t')")
        w.execute("INSERT INTO t VALUES (3001, 9003)")
        q_not_extended(rep, con, "%s auto_vacuum=%s" % (device, av), "auto_vacuum is on")
        con.close()
        w.close()


# GPU entries (session 7, engine/cache/cache_append.h rule 5): queries whose
# answers read what a GPU entry derives from its rows -- the whole-column
# layout ("all integer"), an INTEGER key's group dictionary, DISTINCT's
# value ranges, a TEXT key's codes, NULL bits across the bitmaps' partial
# words, medians and variances
GPU_QUERIES = [
    "SELECT sum(n), total(n), min(n), max(n), count(*) FROM t",
    "SELECT n, count(*), sum(x) FROM t GROUP BY n ORDER BY n",
    "SELECT k, count(DISTINCT n), sum(DISTINCT n) FROM t GROUP BY k ORDER BY k",
    "SELECT s, count(*), min(x), max(x) FROM t GROUP BY s ORDER BY s",
    "SELECT count(x), sum(x), avg(x), count(*) FROM t WHERE n > 0",
    "SELECT k, gpu_median(x), gpu_var_samp(n) FROM t GROUP BY k ORDER BY k",
]


def gpu_append_sql(lo, hi, tag="g", nbase=5000):
    """Rows whose n values are new (beyond the old range), some x NULL,
    new TEXT values of s (tag)."""
    return ("INSERT INTO t SELECT CASE WHEN value %% 5 = 0 THEN NULL ELSE value * 0.5 END, "
            "'k' || (value %% 7), %d + value %% 211 - (value %% 3) * 9000, '%s' || (value %% 5), "
            "value, zeroblob(8) FROM (WITH RECURSIVE r(value) AS (SELECT %d UNION ALL "
            "SELECT value + 1 FROM r WHERE value < %d) SELECT value FROM r)" % (nbase, tag, lo, hi))


def gpu_ask(rep, c, tag, want, how=None, why_has=None, real_n=False):
    """c.ask's checks, then GPU_QUERIES against SQLite (each answered from
    the entry when want is 'extended' or 'cache'; real_n: a REAL n among the
    keys, which the GPU declines to group by), the entry's "how" (how: 'in
    place' or 're-copied') and the budget's books (used moves as the entry's
    bytes: the other entries, kept from earlier sections, stay as they
    were)."""
    c.ask(tag, want, why_has=why_has)
    con = c.con
    for i, q in enumerate(GPU_QUERIES):
        try:
            con.execute("CREATE VIRTUAL TABLE temp.g%d USING gpu_query(%s)"
                        % (i, "'" + q.replace("'", "''") + "'"))
        except sqlite3.OperationalError:
            pass
        got = con.execute("SELECT * FROM g%d" % i).fetchall()
        ls = info(con)["last_scan"]
        ref = con.execute(q).fetchall()
        name = "gpu %s %s g%d" % (c.name, tag, i)
        rep.check(name + " answer", rows_of(got) == rows_of(ref),
                  "%r != %r (%s)" % (got[:4], ref[:4], ls.get("why")))
        if want in ("extended", "cache"):
            rep.check(name + " from the entry", ls.get("path") == "cache" or
                      (real_n and "REAL keys that are not integers" in (ls.get("why") or "")),
                      "%s: %s" % (ls.get("path"), ls.get("why")))
    ic = info(con)["cache"]
    others = ic["used"] - sum(e["bytes"] for e in ic["entries"])
    if not hasattr(c, "others"):
        c.others = others
    rep.check("gpu %s %s books" % (c.name, tag), others == c.others,
              "%d != %d: %s" % (others, c.others, json.dumps(ic)[:600]))
    e = entry(con)
    if how:
        rep.check("gpu %s %s how" % (c.name, tag),
                  e and e["where"] == "gpu" and e["how"].endswith("device columns %s)" % how),
                  json.dumps(e))
    # the entry's bytes count its device columns' room: a copy grows them by
    # the new room's bytes, less the group dictionaries it forgets (at most
    # 8 bytes a distinct value of each column before it)
    if e and e["where"] == "gpu":
        cap = getattr(c, "cap", e["rows"])  # a load leaves no room (asserted)
        if how == "re-copied":
            cap = gpu_cap(e["rows"])
        if hasattr(c, "prev_bytes") and how:
            grow = dev_bytes(4, cap) - dev_bytes(4, c.cap)
            rep.check("gpu %s %s bytes" % (c.name, tag),
                      e["bytes"] - c.prev_bytes >= grow - c.prev_distinct,
                      "%d -> %d, room %d -> %d rows" % (c.prev_bytes, e["bytes"], c.cap, cap))
        c.cap, c.prev_bytes = cap, e["bytes"]
        c.prev_distinct = 8 * sum(con.execute(
            "SELECT count(DISTINCT %s) + 1 FROM t" % col).fetchall()[0][0] for col in "xkns")
    return ic


def gpu_cap(need):
    """engine/cache/cache_append.c ga_cappend_gpu_cap: room for a quarter
    more rows, rounded up to 64."""
    return (need + need // 4 + 63) // 64 * 64


def dev_bytes(ncols, cap):
    """engine/cache/cache_gpu.c ga_cache_gpu_bytes."""
    return ncols * (cap * 8 + 2 * ((cap + 63) // 64) * 8)


def section_gpu(rep, device):
    """A GPU entry extended in place and re-copied, several times in a row,
    with everything it derives from its rows checked (GPU_QUERIES), past a
    budget that cannot hold the copy, over the many-groups path, and under
    a star join (engine/cache/cache_append.h rule 5)."""
    if device != "gpu":
        return
    c = Case(rep, "gpu_grow", device=device)
    ic0 = gpu_ask(rep, c, "loaded", "cache")
    rep.check("gpu entry on the device", entry(c.con)["where"] == "gpu", json.dumps(entry(c.con)))
    cnt = lambda ic: (ic.get("gpu_append_inplace", 0), ic.get("gpu_append_copied", 0))  # noqa: E731
    base = cnt(ic0)
    # the load left no room (its estimate is the table's rows): the first
    # extension re-copies, into room for a quarter more rows
    c.run(gpu_append_sql(N + 1, N + 37, tag="a"))
    ic = gpu_ask(rep, c, "first append", "extended", how="re-copied")
    rep.check("gpu counters after a copy", cnt(ic) == (base[0], base[1] + 1), json.dumps(cnt(ic)))
    ls_why = None
    # several appends in a row, inside the room: in place each time
    lo = N + 38
    for j, (n, tag) in enumerate(((5, "z"), (64, "b"), (100, "0"), (1, "y"))):
        c.run(gpu_append_sql(lo, lo + n - 1, tag=tag, nbase=7000 + 100 * j))
        lo += n
        ic = gpu_ask(rep, c, "in place %d" % j, "extended", how="in place")
        rep.check("gpu counters in place %d" % j, cnt(ic) == (base[0] + j + 1, base[1] + 1),
                  json.dumps(cnt(ic)))
    c.run(gpu_append_sql(lo, lo + 6, tag="c"))
    lo += 7
    info(c.con)  # seen outside a transaction after the commit
    c.con.execute("SELECT * FROM q0").fetchall()
    ls_why = info(c.con)["last_scan"].get("why") or ""
    rep.check("gpu last_scan says in place", "extended by 7 appended rows; device columns in place"
              in ls_why, ls_why)
    # past the room: re-copied again
    c.run(gpu_append_sql(lo, lo + 1999, tag="d"))
    lo += 2000
    ic = gpu_ask(rep, c, "past the room", "extended", how="re-copied")
    rep.check("gpu counters past the room", cnt(ic)[1] == base[1] + 2, json.dumps(cnt(ic)))
    # the many-groups path (cache_gpu_many.c): n's groups past a few ids
    os.environ["GPUAGG_CACHE_MANY_IDS"] = "16"
    try:
        many0 = info(c.con)["cache"]["queries_many"]
        c.run(gpu_append_sql(lo, lo + 40, tag="e", nbase=9000))
        lo += 41
        ic = gpu_ask(rep, c, "many groups", "extended", how="in place")
        rep.check("gpu many groups taken", ic["queries_many"] > many0, json.dumps(ic)[:300])
    finally:
        del os.environ["GPUAGG_CACHE_MANY_IDS"]
    # a REAL where every n was an INTEGER (the whole-column layout), in place
    c.run("INSERT INTO t(x, k, n, s, u) VALUES (1.5, 'k1', 2.5, 'm1', %d)" % lo)
    lo += 1
    gpu_ask(rep, c, "a REAL among integers", "extended", how="in place", real_n=True)
    # a caller whose device is 'cpu' does no device work: the entry stays as
    # it was (not stale), the next caller that may use the GPU extends it
    rows0 = entry(c.con)["rows"]
    c.run("SELECT gpuagg_config('device', 'cpu')")
    c.run(gpu_append_sql(lo, lo + 9, tag="f"))
    lo += 10
    info(c.con)
    got = c.con.execute("SELECT * FROM q0").fetchall()
    why = info(c.con)["last_scan"].get("why") or ""
    e = entry(c.con)
    rep.check("gpu device cpu leaves the entry", got == c.con.execute(QUERIES[0]).fetchall()
              and e["rows"] == rows0 and e["current"] is False and "device = 'cpu'" in why,
              "%s %s" % (why, json.dumps(e)))
    c.run("SELECT gpuagg_config('device', 'gpu')")
    gpu_ask(rep, c, "after device cpu", "extended", how="in place", real_n=True)
    # an old row updated after all these: never extended, SQLite's answer
    c.run("UPDATE t SET n = n + 1 WHERE rowid = 10")
    gpu_ask(rep, c, "update below", "no", real_n=True)
    c.close()
    # a budget that cannot hold the old and the new columns while the copy
    # runs: declined, the uncached answer, gpu_cache reloads
    # (40 * N rows: the entry and the new rows' first block, 65,536 rows,
    # which is read while the entry is still linked, fit in 1.5 times the
    # entry's bytes, the copy's two allocations do not; the other entries,
    # kept from earlier sections, are evicted first)
    c = Case(rep, "gpu_budget", device=device, n=40 * N)
    c.run("SELECT gpuagg_config('cache_bytes', %d)" % (1.5 * entry(c.con)["bytes"]))
    c.run(gpu_append_sql(40 * N + 1, 40 * N + 300))
    gpu_ask(rep, c, "copy past the budget", "no", why_has="not extended: the device columns' new room")
    c.run("SELECT gpuagg_config('cache_bytes', 0)")
    c.close()
    section_gpu_star(rep)


FAULT_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import test_cache_append as T
con = T.connect(sys.argv[2], "gpu")
con.execute("SELECT gpuagg_config('cache_bytes', 100000000)")
con.execute("PRAGMA user_version = 1")
con.execute("SELECT gpu_cache('t', 'x, k, n, s')").fetchall()
q = T.QUERIES[0]
con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % ("'" + q.replace("'", "''") + "'"))
out = [con.execute("SELECT * FROM q").fetchall(), T.info(con)["cache"]["entries"][0]["where"]]
w = T.sqlite3.connect(sys.argv[2], isolation_level=None)
w.execute(T.append_sql(T.N + 1, T.N + 100))
T.info(con)
got = con.execute("SELECT * FROM q").fetchall()
ls = T.info(con)["last_scan"]
ref = con.execute(q).fetchall()
print(json.dumps([T.rows_of(got) == T.rows_of(ref), ls.get("path"), ls.get("why"), out[1],
                  len(T.info(con)["cache"]["entries"])]))
"""


def section_gpu_fault(rep, device):
    """The device cannot hold the old and the new columns while the copy
    runs (the fake backend's memory, GPUAGG_FAKE_MEM, below what the budget
    allows): the extension's allocation fails after the refusals, the entry
    is dropped (it lost its columns: cache_append.h rule 5 (f)) and the query
    answers as SQLite does, saying why."""
    if device != "gpu":
        return
    probe = connect(":memory:", "gpu")
    fake = info(probe).get("backend") == "fake"
    probe.close()
    if not fake:
        return
    path = os.path.join(TMP, "gpu_fault.db")
    make(path, "wal")
    # the load and a query fit in 350,000 bytes of device memory (4 columns
    # of 6,000 rows: 198,016 bytes, and the query's scratch), the copy's new
    # columns (7,680 rows, 251,328 bytes) beside them not in 500,000
    env = dict(os.environ, GPUAGG_FAKE_MEM="425000")
    p = subprocess.run([PYTHON, "-c", FAULT_SCRIPT, os.path.dirname(os.path.abspath(__file__)), path],
                       capture_output=True, text=True, env=env, timeout=300)
    try:
        same, path_, why, where, nent = json.loads(p.stdout.splitlines()[-1])
    except (ValueError, IndexError):
        rep.check("gpu fault ran", False, p.stdout[-500:] + p.stderr[-1500:])
        return
    rep.check("gpu fault answer", same and where == "gpu", "%s %s %s" % (same, where, why))
    rep.check("gpu fault dropped", path_ != "cache" and nent == 0 and
              "the GPU entry is dropped" in (why or ""), "%s: %s (%d entries)" % (path_, why, nent))


STAR_DDL = """
CREATE TABLE f(dk INTEGER, x REAL, v INTEGER, tk TEXT);
CREATE TABLE d(id INTEGER PRIMARY KEY, g TEXT, h INTEGER);
"""
STAR_QUERIES = [
    "SELECT d.g, count(*), sum(f.v), total(f.x) FROM f JOIN d ON f.dk = d.id GROUP BY d.g ORDER BY d.g",
    "SELECT f.tk, d.h, count(*), sum(f.v) FROM f JOIN d ON f.dk = d.id GROUP BY f.tk, d.h "
    "ORDER BY f.tk, d.h",
]


def section_gpu_star(rep):
    """A star join over a fact entry on the GPU that appends extended
    (through a single-table query: a join reads the entries as they are,
    planner/cache_join.c): its group dictionaries, built by the join
    before, are the extended rows'."""
    path = os.path.join(TMP, "star_gpu.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("PRAGMA journal_mode=wal")
    w.executescript(STAR_DDL)
    w.execute("BEGIN")
    w.executemany("INSERT INTO d VALUES (?, ?, ?)", [(i, "g%d" % (i % 3), i % 4) for i in range(20)])
    w.executemany("INSERT INTO f VALUES (?, ?, ?, ?)",
                  [(i % 17, i * 0.25, i % 50, "t%d" % (i % 5)) for i in range(3000)])
    w.execute("COMMIT")
    con = connect(path, "gpu")
    con.execute("PRAGMA user_version = 1")
    con.execute("SELECT gpu_cache('d', 'id, g, h')").fetchall()
    con.execute("SELECT gpu_cache('f', 'dk, x, v, tk')").fetchall()
    con.execute("CREATE VIRTUAL TABLE temp.one USING gpu_query('SELECT count(*), sum(v) FROM f')")
    con.execute("CREATE VIRTUAL TABLE temp.dims USING gpu_query('SELECT count(*), sum(h) FROM d')")
    for i, q in enumerate(STAR_QUERIES):
        con.execute("CREATE VIRTUAL TABLE temp.j%d USING gpu_query(%s)"
                    % (i, "'" + q.replace("'", "''") + "'"))

    def joins(tag, from_cache):
        for i, q in enumerate(STAR_QUERIES):
            got = con.execute("SELECT * FROM j%d" % i).fetchall()
            ls = info(con)["last_scan"]
            ref = con.execute(q).fetchall()
            why = ls.get("why") or ""
            rep.check("gpu star %s j%d" % (tag, i), rows_of(got) == rows_of(ref)
                      and (not from_cache or (ls.get("path") == "cache" and "star join" in why)),
                      "%r != %r (%s: %s)" % (got[:3], ref[:3], ls.get("path"), why))

    joins("loaded", True)
    # new keys of the fact (dk 17..19: dimension rows no fact row had) and
    # new TEXT values sorting before the old ones
    w.execute("INSERT INTO f SELECT 17 + value % 3, value * 0.5, value % 7, 'a' || (value % 2) FROM "
              "(WITH RECURSIVE r(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM r "
              "WHERE value < 50) SELECT value FROM r)")
    ic0 = info(con)["cache"]
    con.execute("SELECT * FROM dims").fetchall()  # d's stamps (extended by 0 rows)
    # a commit that appended nothing to d renews its stamps and record only:
    # no device step, its group dictionaries kept, no counter moved
    ls = info(con)
    ic1, dwhy = ls["cache"], ls["last_scan"].get("why") or ""
    pair = lambda ic: (ic.get("gpu_append_inplace", 0), ic.get("gpu_append_copied", 0))  # noqa: E731
    rep.check("gpu star dimension: no device step for 0 rows",
              pair(ic1) == pair(ic0) and "device columns" not in dwhy,
              "%s -> %s (%s)" % (pair(ic0), pair(ic1), dwhy))
    con.execute("SELECT * FROM one").fetchall()
    why = info(con)["last_scan"].get("why") or ""
    e = [x for x in info(con)["cache"]["entries"] if x["table"] == "main.f"]
    rep.check("gpu star fact extended", "extended by 50 appended rows" in why and e
              and e[0]["where"] == "gpu" and e[0]["appends"] == 50, "%s %s" % (why, json.dumps(e)))
    joins("extended", True)
    con.close()
    w.close()


def main():
    rep = Reporter("cache_append")
    devices = [d for d in os.environ.get("CACHE_DEVICES", "cpu gpu").split()
               if d == "cpu" or GPU]
    for device in devices:
        section_appends(rep, device)
        section_shared(rep, device)
        section_adversarial(rep, device)
        section_truncate(rep, device)
        section_autovacuum(rep, device)
        section_gpu(rep, device)
        section_gpu_fault(rep, device)
    rep.finish()


if __name__ == "__main__":
    main()
