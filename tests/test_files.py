"""test_files.py — the worker and helper connections read the caller's own
file with the caller's own access, and write nothing that it would not
(issue 36, defects 2 and 3).

  readonly   a connection opened read-only (mode=ro, what every gpuagg.dask
             task uses) on a WAL file with frames in its -wal, and on a
             rollback-journal file: gpu_query, gpu_query_partial,
             gpu_aggregate and the gpu_cache load leave the bytes of the
             database, the -wal and the -journal as plain SQLite leaves them
             (not the -shm, which SQLite itself may write under mode=ro),
             and still scan in parallel.  Also immutable=1, and a
             read-write caller's pooled helper closed last (no checkpoint
             on close).
  ro_commit  a read-only WAL caller: another connection commits while its
             workers begin (GPUAGG_SCAN_FAULT=commit); the snapshot sees it
             and begins again, so every worker reads one commit.
  renamed    the file is replaced by rename while the connection has it
             open: the connection keeps reading its old file, and so must
             gpu_query, gpu_aggregate and the gpu_cache load (the serial
             path, with the reason), in WAL and rollback-journal mode.
  raced      the path names the caller's file again, but a worker opened
             the new one (a rename after the pool's own check:
             GPUAGG_SCAN_FAULT=rename:SRC) -- each worker's file is checked.
"""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_files_")
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
ROWS = 3000  # sum(x) = 4501500 with x = id; the replacement doubles it
TEXT = "SELECT sum(x) AS s, count(*) AS n FROM t"
GTEXT = "SELECT y, sum(x) AS s FROM t GROUP BY y ORDER BY y"


def load(con):
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("select gpuagg_config('scan_min_rows', 0)")
    con.execute("select gpuagg_config('threads', 2)")
    return con


def uri(path, **params):
    q = "&".join("%s=%s" % kv for kv in params.items())
    return "file:%s%s" % (path, "?" + q if q else "")


def connect(target, is_uri=False):
    return load(sqlite3.connect(target, isolation_level=None, uri=is_uri, timeout=5.0,
                                check_same_thread=False))


def last_scan(con):
    return json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]


def scans(con):
    return json.loads(con.execute("select gpuagg_info()").fetchone()[0])["scans"]


def remove(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def make(path, journal, factor=1, frames=False):
    """t(id INTEGER PRIMARY KEY, x, y) with x = id * factor.  frames: the
    last rows stay in the -wal (copied while the writer is open, so no
    checkpoint ran), as a reader finds a live WAL file."""
    remove(path)
    src = path + ".src" if frames else path
    remove(src)
    con = sqlite3.connect(src, isolation_level=None)
    con.execute("PRAGMA journal_mode=%s" % journal)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x, y)")
    con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
                "INSERT INTO t SELECT i, i * ?, i % 3 FROM c", (ROWS // 2, factor))
    if frames:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
                "INSERT INTO t SELECT i, i * ?, i % 3 FROM c", (ROWS // 2 + 1, ROWS, factor))
    if frames:
        shutil.copyfile(src, path)
        shutil.copyfile(src + "-wal", path + "-wal")
    con.close()
    if frames:
        remove(src)
    return path


def fingerprint(path):
    """The bytes of the database, its -wal and its -journal (None: no file)."""
    out = {}
    for suffix in ("", "-wal", "-journal"):
        f = path + suffix
        out[suffix or "db"] = (hashlib.sha256(open(f, "rb").read()).hexdigest()
                               if os.path.exists(f) else None)
    return out


def rows(con, sql, params=()):
    try:
        return [tuple(r) for r in con.execute(sql, params).fetchall()]
    except sqlite3.Error as e:
        return [("error", str(e))]


# The four ways gpuagg reads the file: (name, run(con) -> (got, want, path))
def run_query(con):
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % GTEXT)
    got = rows(con, "SELECT * FROM q")
    return got, rows(con, GTEXT), last_scan(con)


def run_partial(con):
    """(a partial is made by the parallel path only: else an error, whose
    text is the reason)"""
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % GTEXT)
    try:
        p = con.execute("SELECT gpu_query_partial('%s')" % GTEXT).fetchone()[0]
    except sqlite3.Error as e:
        return [("error", str(e))], rows(con, GTEXT), {"path": "error", "why": str(e)}
    ls = last_scan(con)
    got = rows(con, "SELECT * FROM q WHERE gpuagg_partial = ?", (p,))
    return got, rows(con, GTEXT), ls


def run_aggregate(con):
    got = rows(con, "SELECT grp, sum FROM gpu_aggregate('t', 'x', NULL, 'y') ORDER BY grp")
    return got, rows(con, "SELECT y, sum(x) FROM t GROUP BY y ORDER BY y"), last_scan(con)


def run_cache(con):
    """(the load's path: the entry's "how" in gpuagg_info())"""
    con.execute("SELECT gpu_cache('t', 'x, y')").fetchone()
    info = json.loads(con.execute("select gpuagg_info()").fetchone()[0])
    how = info["cache"]["entries"][0]["how"]
    load_ls = {"path": how.split(",")[0].split(":")[0], "why": how}
    got = rows(con, "SELECT grp, sum FROM gpu_aggregate('t', 'x', NULL, 'y') ORDER BY grp")
    ls = last_scan(con)
    if ls["path"] != "cache":
        load_ls = {"path": "not cached: " + ls["path"], "why": ls["why"]}
    return got, rows(con, "SELECT y, sum(x) FROM t GROUP BY y ORDER BY y"), load_ls


FUNCS = (("query", run_query), ("partial", run_partial), ("aggregate", run_aggregate),
         ("cache", run_cache))


def section_readonly(rep):
    for journal in ("wal", "delete"):
        for name, run in FUNCS:
            for how in ("ro", "immutable"):
                tag = "readonly_%s_%s_%s" % (journal, name, how)
                path = make(os.path.join(TMP, tag + ".db"), journal,
                            frames=journal == "wal" and how == "ro")
                before = fingerprint(path)
                con = connect(uri(path, **({"mode": "ro"} if how == "ro" else {"immutable": 1})),
                              True)
                got, want, ls = run(con)
                sc = scans(con)
                con.close()  # closes the pooled helper and workers too
                after = fingerprint(path)
                rep.check(tag + "_answer", got == want and len(got) == 3,
                          "got %r want %r" % (got, want))
                rep.check(tag + "_parallel", ls["path"] == "parallel",
                          "path %r why %r" % (ls["path"], ls["why"]))
                rep.check(tag + "_bytes", before == after,
                          "before %r after %r" % (before, after))
                # no pooled connection of a read-only caller can write
                rep.check(tag + "_pool_readonly", sc["pool_idle"] > 0
                          and sc.get("pool_idle_readwrite") == 0, repr(sc))
    # a read-write caller: its helper (pooled, read-write) closes after the
    # caller's connection, so it is the last one on the file; it must not
    # checkpoint either (the caller's own close did what SQLite does)
    for name, run in FUNCS:
        tag = "readwrite_wal_%s" % name
        path = make(os.path.join(TMP, tag + ".db"), "wal")
        con = connect(path)
        con.execute("PRAGMA wal_autocheckpoint=0")
        got, want, ls = run(con)
        sc = scans(con)
        con.execute("INSERT INTO t VALUES(100000, 1, 1)")  # a frame in the -wal
        sqlite_says = fingerprint(path)
        rep.check(tag + "_answer", got == want and ls["path"] == "parallel",
                  "got %r want %r path %r why %r" % (got, want, ls["path"], ls["why"]))
        # its helper, and only that, is read-write (workers read only)
        rep.check(tag + "_pool_helper_rw", sc.get("pool_idle_readwrite") == 1, repr(sc))
        con.close()
        # what plain SQLite's close did to the file (the checkpoint of the
        # last connection, the -wal deleted) is the caller's; nothing after
        plain = make(os.path.join(TMP, tag + "_plain.db"), "wal")
        p = sqlite3.connect(plain, isolation_level=None)
        p.execute("INSERT INTO t VALUES(100000, 1, 1)")
        p.close()
        rep.check(tag + "_wal_gone_as_sqlite", (fingerprint(path)["-wal"] is None)
                  == (fingerprint(plain)["-wal"] is None) and sqlite_says["-wal"] is not None,
                  "%r %r" % (fingerprint(path), fingerprint(plain)))


def section_no_ckpt(rep):
    """A read-write caller with SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on (the
    sqlite3 shell's .dbconfig): its -wal stays as it is when it closes, and
    gpuagg's read-write helper, which closes after it, must not checkpoint
    it either."""
    for name, sql in (("query", "CREATE VIRTUAL TABLE temp.q USING gpu_query('%s');"
                       "SELECT count(*) FROM q;" % GTEXT),
                      ("aggregate", "SELECT count(*) FROM gpu_aggregate('t', 'x', NULL, 'y');")):
        states = []
        for ext in (True, False):
            path = make(os.path.join(TMP, "no_ckpt_%s_%d.db" % (name, ext)), "wal")
            before = fingerprint(path)
            script = [".dbconfig no_ckpt_on_close on", "PRAGMA wal_autocheckpoint=0;"]
            if ext:
                script += [".load %s" % LIB, "SELECT gpuagg_config('scan_min_rows', 0);",
                           "SELECT gpuagg_config('threads', 2);", sql,
                           "SELECT json_extract(gpuagg_info(), '$.last_scan.path');"]
            script += ["INSERT INTO t VALUES(100000, 1, 1);", ".quit"]
            try:
                p = subprocess.run([SQLITE3, path], input="\n".join(script) + "\n",
                                   capture_output=True, text=True, timeout=120)
                out = p.stdout + p.stderr
            except OSError as e:
                out = "cannot run %s: %s" % (SQLITE3, e)
            after = fingerprint(path)
            states.append((after["db"] == before["db"], after["-wal"] is not None, out))
        rep.check("no_ckpt_%s_as_sqlite" % name, states[0][:2] == states[1][:2] == (True, True)
                  and "parallel" in states[0][2], "gpuagg %r, sqlite %r" % (states[0], states[1]))


def grouped_under_fault(con, fault):
    """gpu_aggregate's sum of x by y, with GPUAGG_SCAN_FAULT=fault (a test
    fault of engine/scan/scan.c) for that one call."""
    os.environ["GPUAGG_SCAN_FAULT"] = fault
    try:
        return rows(con, "SELECT grp, sum FROM gpu_aggregate('t', 'x', NULL, 'y') ORDER BY grp")
    finally:
        del os.environ["GPUAGG_SCAN_FAULT"]


def section_ro_commit(rep):
    path = make(os.path.join(TMP, "ro_commit.db"), "wal")
    con = connect(uri(path, mode="ro"), True)
    got = grouped_under_fault(con, "commit")
    ls = last_scan(con)
    want = rows(con, "SELECT y, sum(x) FROM t GROUP BY y ORDER BY y")
    uv = con.execute("PRAGMA user_version").fetchone()[0]
    rep.check("ro_commit_answer", got == want, "got %r want %r" % (got, want))
    rep.check("ro_commit_committed_once", uv == 1, "user_version %r" % uv)
    rep.check("ro_commit_began_again", ls["path"] == "parallel" and ls["snapshot_waits"] == 1,
              "path %r why %r snapshot_waits %r" % (ls["path"], ls["why"], ls["snapshot_waits"]))
    # no quiet moment within the busy timeout (0 here: one try): serial
    con.execute("PRAGMA busy_timeout = 0")
    got = grouped_under_fault(con, "commit")
    ls = last_scan(con)
    rep.check("ro_commit_serial", got == want and ls["path"] == "serial"
              and "committed while the workers began" in ls["why"],
              "got %r path %r why %r" % (got, ls["path"], ls["why"]))
    con.close()


def section_renamed(rep):
    for journal in ("delete", "wal"):
        for name, run in FUNCS:
            for how in ("rw", "ro"):
                tag = "renamed_%s_%s_%s" % (journal, name, how)
                path = make(os.path.join(TMP, tag + ".db"), journal)
                new = make(os.path.join(TMP, tag + "_new.db"), journal, factor=2)
                con = connect(uri(path, mode="ro") if how == "ro" else path, how == "ro")
                # a first call: the pool has this path's connections, on the
                # old file
                if name != "cache":
                    run(con)
                    con.execute("DROP TABLE IF EXISTS temp.q")
                old_sum = con.execute("SELECT sum(x) FROM t").fetchone()[0]
                os.rename(new, path)
                for suffix in ("-wal", "-shm"):
                    if os.path.exists(new + suffix):
                        os.remove(new + suffix)
                got, want, ls = run(con)
                sqlite_sum = con.execute("SELECT sum(x) FROM t").fetchone()[0]
                if name == "partial" and ls["path"] == "error":
                    got = want  # made by the parallel path only: the error
                rep.check(tag + "_answer", got == want and sqlite_sum == old_sum == 4501500,
                          "got %r want %r (sum %r, before %r)" % (got, want, sqlite_sum, old_sum))
                rep.check(tag + "_serial", ls["path"] == ("error" if name == "partial" else
                                                          "serial") and "renamed" in ls["why"],
                          "path %r why %r" % (ls["path"], ls["why"]))
                con.close()


def section_raced(rep):
    for journal in ("delete", "wal"):
        tag = "raced_%s" % journal
        path = make(os.path.join(TMP, tag + ".db"), journal)
        keep = path + ".orig"
        os.link(path, keep)  # the caller's file, under a second name
        new = make(os.path.join(TMP, tag + "_new.db"), journal, factor=2)
        con = connect(path)
        con.execute("SELECT count(*) FROM t").fetchone()
        os.rename(new, path)  # the workers open this one...
        # ...and then the caller's file is back at the path
        got = grouped_under_fault(con, "rename:" + keep)
        ls = last_scan(con)
        want = rows(con, "SELECT y, sum(x) FROM t GROUP BY y ORDER BY y")
        moved = con.execute("SELECT sum(x) FROM t").fetchone()[0]
        rep.check(tag + "_answer", got == want and moved == 4501500,
                  "got %r want %r (sum %r)" % (got, want, moved))
        rep.check(tag + "_serial", ls["path"] == "serial" and "worker reads another file" in
                  ls["why"], "path %r why %r" % (ls["path"], ls["why"]))
        con.close()


def main():
    rep = Reporter("files")
    for section in (section_readonly, section_no_ckpt, section_ro_commit, section_renamed, section_raced):
        section(rep)
    rep.finish()
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
