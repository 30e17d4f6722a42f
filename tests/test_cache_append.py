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
  - a GPU entry (GPUAGG_TEST_GPU=1, the fake backend): not extended, says
    so, answers as SQLite.
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
    w.execute("BEGIN")
    w.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", [new_row(i) for i in range(1, n + 1)])
    w.execute("COMMIT")
    w.close()


def new_row(i, tag="m"):
    return (i * 0.5, "k%d" % (i % 7), i % 1000 - 300, "%s%03d" % (tag, i % 37), i,
            b"\x00" * 8)


def append_sql(lo, hi, tag="m"):
    return ("INSERT INTO t SELECT value * 0.5, 'k' || (value %% 7), value %% 1000 - 300, "
            "'%s' || substr('00' || (value %% 37), -3), value, zeroblob(8) FROM "
            "(WITH RECURSIVE r(value) AS (SELECT %d UNION ALL SELECT value + 1 FROM r "
            "WHERE value < %d) SELECT value FROM r)" % (tag, lo, hi))


class Case:
    """One database, one connection holding its entry, the gpu_query tables."""

    def __init__(self, rep, name, mode="wal", device="cpu"):
        self.rep, self.name, self.device = rep, name, device
        self.path = os.path.join(TMP, "%s_%s.db" % (name, device))
        make(self.path, mode)
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
        info(con)  # seen outside a transaction
        got = con.execute("SELECT * FROM q").fetchall()
        why = info(con)["last_scan"].get("why") or ""
        ref = con.execute("SELECT count(*), sum(a), sum(b) FROM t").fetchall()
        rep.check("%s truncate secure_delete=%s answer" % (device, sd), got == ref,
                  "%r != %r (%s)" % (got, ref, why))
        rep.check("%s truncate secure_delete=%s not extended" % (device, sd),
                  "extended by" not in why and "is free now" in why, why)
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
        info(con)
        got = con.execute("SELECT * FROM q").fetchall()
        why = info(con)["last_scan"].get("why") or ""
        ref = con.execute("SELECT count(*), sum(a), sum(b) FROM t").fetchall()
        rep.check("%s auto_vacuum=%s answer" % (device, av), got == ref,
                  "%r != %r (%s)" % (got, ref, why))
        rep.check("%s auto_vacuum=%s not extended" % (device, av),
                  "extended by" not in why and "auto_vacuum is on" in why, why)
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
    rep.finish()


if __name__ == "__main__":
    main()
