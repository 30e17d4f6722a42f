"""test_cache_share.py — one column cache per process (issue 40, part 2).

gpu_cache's entries are keyed by the database file's identity (device and
inode) and the table, and answer every connection of the process that opens
that file, main or attached, whenever that connection's own stamp proves the
entry current (docs/gpu_cache.md, "Sharing").  Checked here, with host
entries and (GPUAGG_TEST_GPU=1, the fake backend under make test) GPU ones:

  - three connections share one entry: one load (gpuagg_info's "loads"),
    the others answered "shared", every answer equal to the reference read
    on its own connection;
  - a connection opened before the load, inside gpu_aggregate's own read
    transaction (WAL): not proven until it is seen outside a transaction;
    rollback journal: proven under its SHARED lock;
  - a write to TEMP, or to another attached file, leaves main's entry
    current (it moved total_changes only);
  - adversarial: a file rewritten in place with the same size, header and
    timestamps; a WAL reset between checks; VACUUM; a deleted row; a schema
    change; the database replaced by rename; a reader holding an older WAL
    snapshot; the entry attached under another name;
  - the owner's close keeps a shared entry for the others, drops a temp one;
  - threads, each with its own connection, querying, loading, dropping and
    evicting at once while a writer commits (every answer equal to the
    reference in the same snapshot).
"""

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_share_")
PYTHON = os.environ.get("PYTHON") or sys.executable
COLS = "grp, rows, count, sum, total, avg, min, max"
STRESS_SECONDS = float(os.environ.get("SHARE_STRESS_SECONDS", "2"))
RACE_LOADS = int(os.environ.get("SHARE_RACE_LOADS", "30"))


def connect(path, device="cpu"):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    cfg(con, "scan_min_rows", 0)
    cfg(con, "device", device)
    return con


def cfg(con, name, value):
    return con.execute("select gpuagg_config(?, ?)", (name, value)).fetchall()[0][0]


def info(con):
    return json.loads(con.execute("select gpuagg_info()").fetchall()[0][0])


def rowset(rows):
    return sorted(tuple(typed_key(v) for v in r) for r in rows)


def ref_sql(table, x, f, g):
    return ("SELECT %s, count(%s), gpu_sum(%s), gpu_total(%s), gpu_avg(%s), gpu_min(%s), "
            "gpu_max(%s) FROM %s%s%s"
            % ("+(%s), count(*)" % g if g else "NULL, count(*)", x, x, x, x, x, x, table,
               " WHERE %s" % f if f else "", " GROUP BY +(%s)" % g if g else ""))


def ask(con, table, x="x", f=None, g=None):
    """(same as the reference, last_scan) on con's own snapshot."""
    got = con.execute("SELECT %s FROM gpu_aggregate(?, ?, ?, ?)" % COLS,
                      (table, x, f, g)).fetchall()
    ls = info(con)["last_scan"]
    ref = con.execute(ref_sql(table, x, f, g)).fetchall()
    return rowset(got) == rowset(ref), ls


def check(rep, name, con, table="t", want=None, why=None, x="x", f=None, g="k"):
    ok, ls = ask(con, table, x, f, g)
    detail = "path %r why %r" % (ls["path"], ls["why"])
    if ok and want == "shared":
        ok = ls["path"] == "cache" and "shared" in ls["why"]
    elif ok and want == "cache":
        ok = ls["path"] == "cache"
    elif ok and want == "uncached":
        ok = ls["path"] != "cache"
    if ok and why is not None:
        ok = why in ls["why"]
    rep.check(name, ok, detail)
    return ls


def other_process(path, *stmts):
    script = ("import sqlite3, sys\ncon = sqlite3.connect(sys.argv[1], isolation_level=None, "
              "timeout=30)\nfor s in sys.argv[2:]:\n    con.execute(s).fetchall()\ncon.close()\n")
    subprocess.run([PYTHON, "-c", script, path] + list(stmts), check=True)


def make_file(path, mode, n=4000, seed=1, marker=True):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    r = random.Random(seed)
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("PRAGMA journal_mode=%s" % mode)
    w.execute("CREATE TABLE t(x INTEGER, k INTEGER, y REAL)")
    rows = [(r.randint(-1000, 1000), r.randint(0, 5), r.random() * 100) for _ in range(n)]
    if marker:
        rows[n // 2] = (0x11223344, 1, 1.0)  # a 4-byte integer found on disk
    w.execute("BEGIN")  # one commit (one fsync), not one per row
    w.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    w.execute("COMMIT")
    w.close()


def load(con, table="t"):
    # fetchall: the statement ends, and with it the read lock its reads took
    return con.execute("SELECT gpu_cache(?, 'x, k, y')", (table,)).fetchall()[0][0]


def section_three(rep, device, mode):
    tag = "%s_%s_three" % (device, mode)
    path = os.path.join(TMP, "three_%s_%s.db" % (device, mode))
    make_file(path, mode)
    a = connect(path, device)
    before = connect(path, device)  # open before the load (a pool's)
    check(rep, tag + "_before_prepared", before)  # its statement, kept
    loads0 = info(a)["cache"].get("loads", 0)
    load(a)
    b, c = connect(path, device), connect(path, device)
    check(rep, tag + "_owner", a, want="cache")
    check(rep, tag + "_b", b, want="shared")
    check(rep, tag + "_c", c, want="shared")
    check(rep, tag + "_c_filtered", c, want="shared", f="y > 50", g=None)
    # the one-statement form (gpu_query_json, its statement holding a read
    # transaction on main): a new connection answered from the shared entry
    d = connect(path, device)
    q = "SELECT k, sum(x), count(*) FROM t GROUP BY k ORDER BY k"
    got = [json.loads(r[0]) for r in
           d.execute("SELECT row_json FROM gpu_query_json(?)", (q,)).fetchall()]
    ls = info(d)["last_scan"]
    ref = [list(r) for r in d.execute(q.replace("sum(", "gpu_sum(")).fetchall()]
    rep.check(tag + "_json_shared", got == ref and ls["path"] == "cache"
              and "shared" in ls["why"], "%r %r %r" % (got[:2], ref[:2], ls))
    d.close()
    ci = info(c)["cache"]
    es = [e for e in ci["entries"] if e["table"] == "main.t"]
    rep.check(tag + "_one_load", ci.get("loads", 0) - loads0 == 1 and len(es) == 1
              and es[0].get("shared_hits") == 4 and es[0].get("mine") is False
              and es[0].get("shareable") is True and es[0]["current"] is True, repr(ci))
    rep.check(tag + "_owner_sees_mine", [e.get("mine") for e in info(a)["cache"]["entries"]
                                         if e["table"] == "main.t"] == [True])
    # opened before the load: gpu_aggregate's statement holds a read
    # transaction on main from before the call; WAL cannot prove it began
    # after the load until the connection is seen outside one
    if mode == "wal":
        check(rep, tag + "_before_unproven", before, want="uncached",
              why="may have begun before the load")
        info(before)  # outside any transaction: noted
        check(rep, tag + "_before_proven", before, want="shared")
    else:
        check(rep, tag + "_before_locked", before, want="shared")
    # an explicit read transaction on the entry's snapshot, then another
    # commit: the reader still reads its older snapshot, exactly
    b.execute("BEGIN")
    b.execute("SELECT count(*) FROM t").fetchall()
    if mode == "wal":
        other_process(path, "UPDATE t SET x = x + 1 WHERE rowid = 3")
        check(rep, tag + "_old_snapshot", b, want="uncached")
        b.execute("COMMIT")
        check(rep, tag + "_after_commit", b, want="uncached")
    else:
        check(rep, tag + "_in_txn", b, want="shared")
        b.execute("COMMIT")
        other_process(path, "UPDATE t SET x = x + 1 WHERE rowid = 3")
        check(rep, tag + "_after_commit", b, want="uncached")
    check(rep, tag + "_owner_stale", a, want="uncached")
    load(c)  # c reloads: the new entry is c's, shared with a and b
    if mode == "wal":  # a's kept statement: proven once a is seen idle
        check(rep, tag + "_reloaded_a_kept", a, want="uncached", why="before the load")
        info(a)
    check(rep, tag + "_reloaded_a", a, want="shared")
    check(rep, tag + "_reloaded_c", c, want="cache")
    if mode == "wal":
        # a load inside an older WAL snapshot: exact for its owner, never
        # shared (its stamp would be the newest commit's)
        a.execute("BEGIN")
        a.execute("SELECT count(*) FROM t").fetchall()
        other_process(path, "UPDATE t SET x = x + 7 WHERE rowid = 5")
        load(a)
        check(rep, tag + "_old_snapshot_owner", a, want="cache")
        a.execute("COMMIT")
        check(rep, tag + "_old_snapshot_load_b", b, want="uncached")
        rep.check(tag + "_old_snapshot_not_shareable",
                  [e.get("shareable") for e in info(a)["cache"]["entries"]
                   if e["table"] == "main.t"] == [False])
        load(c)
    # the owner closes: its shared entry stays for the others (a WAL with
    # frames; a WAL without any proves nothing once the owner is gone)
    c.close()
    info(b)
    check(rep, tag + "_after_owner_close", b, want="shared")
    for con in (a, b, before):
        con.close()


def section_temp_attached(rep, device):
    tag = "%s_scratch" % device
    path = os.path.join(TMP, "scratch_%s.db" % device)
    other = os.path.join(TMP, "scratch_other_%s.db" % device)
    make_file(path, "wal")
    make_file(other, "delete")
    a = connect(path, device)
    load(a)
    check(rep, tag + "_hit", a, want="cache")
    a.execute("CREATE TEMP TABLE scratch(v)")
    a.execute("INSERT INTO scratch VALUES (1), (2)")
    check(rep, tag + "_after_temp_write", a, want="cache")
    a.execute("ATTACH ? AS o", (other,))
    a.execute("INSERT INTO o.t VALUES (1, 1, 1.0)")
    check(rep, tag + "_after_attached_write", a, want="cache")
    a.execute("UPDATE t SET x = x + 1 WHERE rowid = 9")
    check(rep, tag + "_after_own_write", a, want="uncached", why="this connection wrote")
    # a temp entry is its owner's alone, and goes with it
    a.execute("CREATE TEMP TABLE tt AS SELECT * FROM main.t")
    load(a, "tt")
    check(rep, tag + "_temp_entry", a, table="tt", want="cache")
    a.execute("INSERT INTO tt VALUES (12345, 1, 1.0)")  # TEMP's own writes count
    check(rep, tag + "_temp_entry_written", a, table="tt", want="uncached")
    load(a, "tt")
    b = connect(path, device)
    rep.check(tag + "_temp_not_seen", all(e["table"] != "temp.tt"
                                          for e in info(b)["cache"]["entries"]))
    # b attaches the file of a's entry under another name
    load(a)
    b.execute("ATTACH ? AS again", (path,))
    check(rep, tag + "_attached_other_name", b, table="again.t", want="shared")
    a.close()
    rep.check(tag + "_temp_dropped_on_close", all(e["table"] != "temp.tt"
                                                  for e in info(b)["cache"]["entries"]))
    b.close()


def section_adversarial(rep, device, mode):
    tag = "%s_%s_adv" % (device, mode)
    path = None

    def fresh(name):
        # a file of its own per case: no inode of a removed file reused
        # under SQLite's in-process lock table
        nonlocal path
        path = os.path.join(TMP, "adv_%s_%s_%s.db" % (device, mode, name))
        make_file(path, mode)
        a = connect(path, device)
        if mode == "wal":  # a committed frame: the WAL itself proves the state
            a.execute("UPDATE t SET y = y + 1 WHERE rowid = 2")
        load(a)
        b = connect(path, device)
        check(rep, "%s_%s_start" % (tag, name), b, want="shared")
        return a, b

    def after(name, a, b):
        # a new connection, and b: exact, never from the old entry (serial:
        # the worker pool's connections keep their pages across a forged
        # rewrite that leaves the change counter, as SQLite itself does)
        n = connect(path, device)
        for con in (n, b):
            cfg(con, "threads", 1)
        check(rep, "%s_%s_new" % (tag, name), n, want="uncached")
        n.close()
        check(rep, "%s_%s_b" % (tag, name), b, want="uncached")
        a.close()
        b.close()

    if mode == "delete":
        # rewritten in place: the same size, header and times (ctime moves)
        a, b = fresh("rewritten")
        st = os.stat(path)
        # in another process: closing a descriptor of the file here would
        # drop this process's POSIX locks on it
        script = ("import os, sys\np = sys.argv[1]\nst = os.stat(p)\n"
                  "with open(p, 'r+b') as f:\n"
                  "    at = f.read().find(bytes.fromhex('11223344'))\n"
                  "    f.seek(at)\n    f.write(bytes.fromhex('11223345'))\n"
                  "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\nprint(at)\n")
        at = int(subprocess.run([PYTHON, "-c", script, path], check=True,
                                capture_output=True, text=True).stdout)
        st2 = os.stat(path)
        rep.check(tag + "_rewrite_alike", at > 0 and st2.st_size == st.st_size
                  and st2.st_mtime_ns == st.st_mtime_ns)
        after("rewritten", a, b)
    else:
        # the WAL reset between checks: a write, a TRUNCATE checkpoint, and
        # a write again (new salts)
        a, b = fresh("wal_reset")
        other_process(path, "UPDATE t SET x = 5 WHERE rowid = 4",
                      "PRAGMA wal_checkpoint(TRUNCATE)", "UPDATE t SET x = 6 WHERE rowid = 4")
        after("wal_reset", a, b)
    for name, stmts in (("vacuum", ["DELETE FROM t WHERE rowid % 7 = 0", "VACUUM"]),
                        ("deleted_row", ["DELETE FROM t WHERE rowid = 11"]),
                        ("schema", ["ALTER TABLE t ADD COLUMN z"]),
                        ("update_one", ["UPDATE t SET x = x + 1 WHERE rowid = 1"])):
        a, b = fresh(name)
        other_process(path, *stmts)
        after(name, a, b)
    # replaced by rename: a file built alike renamed over the path
    a, b = fresh("renamed")
    alike = path + ".new.db"
    make_file(alike, mode, seed=2)
    os.replace(alike, path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(alike + suffix):
            os.remove(alike + suffix)
    n = connect(path, device)
    check(rep, tag + "_renamed_new", n, want="uncached")
    rep.check(tag + "_renamed_not_seen", all(e["table"] != "main.t" or e.get("mine")
                                             for e in info(n)["cache"]["entries"]))
    n.close()
    a.close()
    b.close()


def section_stress(rep, device):
    """Threads with their own connections: loading, querying, dropping and
    evicting (a budget of about two entries) while a writer commits."""
    tag = "%s_stress" % device
    paths = [os.path.join(TMP, "stress_%s_%d.db" % (device, i)) for i in range(2)]
    for i, p in enumerate(paths):
        make_file(p, "wal", n=3000, seed=10 + i)
    one = None
    probe = connect(paths[0], device)
    load(probe)
    one = [e for e in info(probe)["cache"]["entries"] if e["table"] == "main.t"][0]["bytes"]
    probe.close()
    stop = time.time() + STRESS_SECONDS
    errors, counts = [], {"checks": 0, "hits": 0, "shared": 0}
    lock = threading.Lock()

    def writer():
        w = sqlite3.connect(paths[0], isolation_level=None, timeout=30)
        i = 0
        while time.time() < stop:
            w.execute("UPDATE t SET x = x + 1 WHERE rowid = ?", (1 + i % 50,))
            i += 1
            time.sleep(0.05)
        w.close()

    def worker(k):
        r = random.Random(k)
        con = None
        try:
            while time.time() < stop:
                if con is None or r.random() < 0.05:
                    if con is not None:
                        con.close()
                    con = connect(paths[k % 2], device)
                    cfg(con, "cache_bytes", int(one * 2.5))
                    cfg(con, "threads", 1 + k % 2)
                op = r.random()
                if op < 0.2:
                    try:
                        load(con)
                    except sqlite3.Error as e:  # the budget, a writer
                        if "cache_bytes" not in str(e) and "changed during" not in str(e):
                            raise
                elif op < 0.25:
                    con.execute("SELECT gpu_cache_drop('t')").fetchall()
                else:
                    con.execute("BEGIN")  # one snapshot for both
                    ok, ls = ask(con, "t", "x", "y > 30" if op < 0.6 else None, "k")
                    con.execute("COMMIT")
                    with lock:
                        counts["checks"] += 1
                        counts["hits"] += ls["path"] == "cache"
                        counts["shared"] += "shared" in ls["why"]
                        if not ok:
                            errors.append((k, ls))
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append((k, repr(e)))
        finally:
            if con is not None:
                con.close()

    threads = [threading.Thread(target=writer)] + \
        [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=STRESS_SECONDS + 120)
    rep.check(tag + "_exact", not errors and counts["checks"] > 20,
              "%r %r" % (errors[:3], counts))
    rep.check(tag + "_shared_some", counts["shared"] > 0, repr(counts))
    rep.check(tag + "_no_hang", not any(t.is_alive() for t in threads))
    end = connect(paths[1], device)
    ci = info(end)["cache"]
    rep.check(tag + "_budget_kept", ci["used"] <= int(one * 2.5) + one, repr(ci["used"]))
    end.close()


def section_files_race(rep, device):
    """Two connections load the same table at once with cache files on,
    while a third queries it: gpu_cache writes the file (and copies a GPU
    entry to the device) before linking the entry, so no other connection
    can query, replace or evict it meanwhile (cache_fns.c rule 10; before,
    the file was written from an entry another load had freed, and a copy
    to the device freed the host segments a query was reading: crashes).
    The answer after the race is exact."""
    tag = "files_race_" + device
    path = os.path.join(TMP, "race_%s.db" % device)
    make_file(path, "delete", n=int(os.environ.get("SHARE_RACE_ROWS", "400000")), marker=False)
    cons = [connect(path, device) for _ in range(3)]
    for con in cons:
        cfg(con, "cache_file", "on")
    errors = []

    def loads(con, order):
        try:
            for i in range(RACE_LOADS):
                con.execute("SELECT gpu_cache('t', ?)", (order[i % 2],)).fetchall()
        except sqlite3.Error as e:
            errors.append(repr(e))

    stop = []

    def queries(con):
        try:
            while not stop:
                ask(con, "t")
        except sqlite3.Error as e:
            errors.append(repr(e))

    ts = [threading.Thread(target=loads, args=(cons[0], ["x, k, y", "y, k, x"])),
          threading.Thread(target=loads, args=(cons[1], ["y, k, x", "x, k, y"]))]
    q = threading.Thread(target=queries, args=(cons[2],))
    q.start()
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    stop.append(1)
    q.join(120)
    rep.check(tag + "_no_error", not errors, repr(errors[:3]))
    rep.check(tag + "_no_hang", not any(t.is_alive() for t in ts + [q]))
    check(rep, tag + "_exact", cons[2])
    for con in cons:
        con.close()


def main():
    rep = Reporter("cache_share")
    devices = [d for d in os.environ.get("CACHE_DEVICES", "cpu gpu").split()
               if d == "cpu" or GPU]
    only = os.environ.get("SHARE_ONLY", "").split()
    for device in devices:
        for name, fn in (("three", section_three), ("adversarial", section_adversarial)):
            for mode in ("wal", "delete"):
                if not only or name in only:
                    t0 = time.time()
                    fn(rep, device, mode)
                    print("%s %s %s: %.1f s" % (device, name, mode, time.time() - t0))
        for name, fn in (("temp_attached", section_temp_attached), ("stress", section_stress),
                         ("files_race", section_files_race)):
            if not only or name in only:
                t0 = time.time()
                fn(rep, device)
                print("%s %s: %.1f s" % (device, name, time.time() - t0))
    rep.finish()


if __name__ == "__main__":
    main()
