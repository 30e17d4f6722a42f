"""test_cache_keep.py — the process's column cache outlives its last
connection (issue 40, part 2: pandas' read_sql with a new connection per
call, sqlite-utils, notebooks that reconnect; engine/cache/cache.c rule 7,
docs/gpu_cache.md "Sharing").

Every scenario runs in a process of its own (this file, run as a child),
so that "no connection open" is the whole process's state:

  - reopen: open, gpu_cache, close, open again and query: answered from the
    kept entry (last_scan.why says "kept"), gpuagg_info's loads 1 and kept
    1, the rows bit-identical to the first connection's and to SQLite's;
  - a write by another process between the close and the reopen: the new
    connection proves the entry stale, answers uncached (exact) and
    gpu_cache reloads it (loads 2);
  - WAL: a process that keeps the database open keeps the WAL, so the kept
    entry is proven; a WAL checkpointed away (TRUNCATE) while no connection
    of ours was open, or deleted by our own last close (nobody else holds
    the file), proves nothing: uncached, exact;
  - the database replaced by rename while no connection was open: the new
    file is never answered from the old entry;
  - an entry that a reopened connection proved stale goes at that
    connection's close, when it is the last (nothing kept answers nobody);
  - gpuagg_config('cache_keep', 'off') on the last connection: today's
    behaviour, the cache freed (nothing kept, the next load is the first);
  - host entries and (GPUAGG_TEST_GPU=1: the fake backend under make test)
    GPU entries;
  - threads opening, querying and closing their own connections over and
    over (the count through 0 while others open): every answer exact and
    from the one load;
  - pandas: three calls, each with a fresh connection, through gpuagg.query
    (as_pandas=True) and pandas.read_sql of its table: one load.
"""

import importlib.util
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU, ROOT  # noqa: E402

PYTHON = os.environ.get("PYTHON") or sys.executable
COLS = "grp, rows, count, sum, total, avg, min, max"
QUERY = "SELECT k, sum(x), count(*), min(y), max(y) FROM t GROUP BY k ORDER BY k"


# ---- the child: one scenario in a process of its own ----

def connect(path, device, keep=None):
    con = sqlite3.connect(path, isolation_level=None, timeout=30)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.enable_load_extension(False)
    cfg(con, "scan_min_rows", 0)
    cfg(con, "device", device)
    if keep is not None:
        try:
            cfg(con, "cache_keep", keep)
        except sqlite3.OperationalError:  # a build without the knob
            pass
    return con


def cfg(con, name, value=None):
    if value is None:
        return con.execute("select gpuagg_config(?)", (name,)).fetchall()[0][0]
    return con.execute("select gpuagg_config(?, ?)", (name, value)).fetchall()[0][0]


def info(con):
    return json.loads(con.execute("select gpuagg_info()").fetchall()[0][0])


def rows_key(rows):
    return [[typed_key(v) for v in r] for r in rows]


def ask(con):
    """The answer (typed, in order), SQLite's own, and last_scan."""
    got = con.execute("SELECT %s FROM gpu_aggregate('t', 'x', NULL, 'k') ORDER BY grp"
                      % COLS).fetchall()
    ls = info(con)["last_scan"]
    ref = con.execute("SELECT k, count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), "
                      "gpu_min(x), gpu_max(x) FROM t GROUP BY +k ORDER BY k").fetchall()
    return {"rows": repr(rows_key(got)), "ref": repr(rows_key(ref)),
            "path": ls["path"], "why": ls["why"]}


def cache_state(con):
    c = info(con)["cache"]
    return {"loads": c.get("loads"), "kept": c.get("kept"), "connections": c.get("connections"),
            "entries": [{k: e.get(k) for k in ("table", "kept", "mine", "current", "where")}
                        for e in c["entries"]]}


def make_file(path, mode, seed=1, n=3000):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    r = random.Random(seed)
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("PRAGMA journal_mode=%s" % mode)
    w.execute("CREATE TABLE t(x INTEGER, k INTEGER, y REAL)")
    w.execute("BEGIN")
    w.executemany("INSERT INTO t VALUES (?, ?, ?)",
                  [(r.randint(-1000, 1000), r.randint(0, 5), r.random() * 100)
                   for _ in range(n)])
    w.execute("COMMIT")
    w.close()


def other_process(path, *stmts):
    script = ("import sqlite3, sys\ncon = sqlite3.connect(sys.argv[1], isolation_level=None, "
              "timeout=30)\nfor s in sys.argv[2:]:\n    con.execute(s).fetchall()\ncon.close()\n")
    subprocess.run([PYTHON, "-c", script, path] + list(stmts), check=True)


class Holder:
    """Another process with the database open (a pool, a writer): its
    connection keeps the WAL and the wal-index while ours are closed."""
    SCRIPT = ("import sqlite3, sys\ncon = sqlite3.connect(sys.argv[1], isolation_level=None, "
              "timeout=30)\ncon.execute('SELECT count(*) FROM t').fetchall()\n"
              "print('ok', flush=True)\nfor line in sys.stdin:\n"
              "    con.execute(line.strip()).fetchall()\n    print('ok', flush=True)\n")

    def __init__(self, path):
        self.p = subprocess.Popen([PYTHON, "-c", self.SCRIPT, path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == "ok"

    def run(self, stmt):
        self.p.stdin.write(stmt + "\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == "ok"

    def close(self):
        self.p.stdin.close()
        self.p.wait(60)


def load(con):
    return con.execute("SELECT gpu_cache('t', 'x, k, y')").fetchall()[0][0]


def child(scn, device, mode, path):
    out = {}
    make_file(path, mode)
    holder = Holder(path) if mode == "wal" and scn != "wal_alone" else None
    a = connect(path, device, "off" if scn == "knob_off" else None)
    try:
        out["default"] = cfg(a, "cache_keep") if scn != "knob_off" else "on"
    except sqlite3.OperationalError as e:  # a build without the knob
        out["default"] = str(e)
    if mode == "wal":  # a committed frame: the WAL itself proves the state
        a.execute("UPDATE t SET y = y + 1 WHERE rowid = 2")
    load(a)
    out["first"] = ask(a)
    out["first_state"] = cache_state(a)
    a.close()
    # no connection of this process is open now
    if scn in ("write", "stale"):
        other_process(path, "UPDATE t SET x = x + 1 WHERE rowid = 3")
    elif scn == "checkpoint":
        holder.run("PRAGMA wal_checkpoint(TRUNCATE)")
    elif scn == "rename":
        alike = path + ".new.db"
        make_file(alike, mode, seed=2)
        os.replace(alike, path)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(alike + suffix):
                os.remove(alike + suffix)
    b = connect(path, device)
    out["reopen_state"] = cache_state(b)
    out["second"] = ask(b)
    out["after_state"] = cache_state(b)
    if scn == "stale":  # proven stale, then the last close: it goes
        b.close()
        c = connect(path, device)
        out["stale_state"] = cache_state(c)
        c.close()
        if holder:
            holder.close()
        return out
    if out["second"]["path"] != "cache":
        load(b)
        out["reload"] = ask(b)
        out["reload_state"] = cache_state(b)
    b.close()
    if holder:
        holder.close()
    return out


def child_churn(device, path):
    """Threads, each opening, querying and closing its own connections
    over and over: the process's connection count goes through 0 while
    others open (engine/cache/cache.c rule 7 under g_mu and mu)."""
    import threading
    make_file(path, "delete")
    a = connect(path, device)
    load(a)
    want = ask(a)["rows"]
    a.close()
    errors, answers = [], []

    def worker():
        try:
            for _ in range(int(os.environ.get("KEEP_CHURN", "15"))):
                con = connect(path, device)
                got = ask(con)
                con.close()
                answers.append(got["path"])
                if got["rows"] != want or got["rows"] != got["ref"]:
                    errors.append(got)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(240)
    end = connect(path, device)
    st = cache_state(end)
    end.close()
    return {"errors": [repr(e)[:300] for e in errors[:3]], "alive": any(t.is_alive() for t in ts),
            "cached": answers.count("cache"), "n": len(answers), "state": st}


def install_package(dest):
    """gpuagg as the wheel lays it out (tests/hosts/test_analysts.py's way)."""
    pkg = os.path.join(dest, "gpuagg")
    os.makedirs(pkg)
    src = os.path.join(ROOT, "pkg", "python", "gpuagg")
    text = open(os.path.join(src, "__init__.py.in")).read()
    open(os.path.join(pkg, "__init__.py"), "w").write(
        text.replace("@VERSION@", "0+test").replace("@KIND@", "test build"))
    shutil.copy(LIB + ".so", os.path.join(pkg, "libgpuagg.so"))
    sys.path.insert(0, dest)
    import gpuagg
    return gpuagg


def child_pandas(device, path):
    """A connection per call, as pandas users write it (docs/python_node_cli.md)."""
    import pandas
    gpuagg = install_package(os.path.join(os.path.dirname(path), "site"))
    make_file(path, "delete")
    out = {"calls": []}
    for i in range(3):
        con = sqlite3.connect(path)
        gpuagg.load(con)
        if device == "cpu":
            con.execute("SELECT gpuagg_config('device', 'cpu')").fetchall()
        if i == 0:  # once per process: later connections find the entry
            con.execute("SELECT gpu_cache('t', 'x, k, y')").fetchall()
        df = gpuagg.query(con, QUERY, as_pandas=True)
        ls = info(con)["last_scan"]
        df2 = pandas.read_sql('SELECT * FROM temp."%s"' % gpuagg.query_table(con, QUERY), con)
        ref = pandas.read_sql(QUERY.replace("sum(", "gpu_sum("), con)
        out["calls"].append({"df": repr(df.values.tolist()), "df2": repr(df2.values.tolist()),
                             "ref": repr(ref.values.tolist()), "path": ls["path"],
                             "why": ls["why"], "state": cache_state(con)})
        con.close()
    return out


# ---- the parent: checks ----

def run_child(*args):
    env = dict(os.environ)
    if args[0] == "pandas" and "libasan" in env.get("LD_PRELOAD", ""):
        # make test-asan: pandas leaves the interpreter's objects allocated
        # at exit (tests/hosts/test_analysts.py says so too); the other
        # children check gpuagg's leaks with the cache kept at exit
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    r = subprocess.run([PYTHON, os.path.abspath(__file__), "child"] + list(args),
                       capture_output=True, text=True, timeout=300, env=env)
    if r.returncode != 0:
        return {"error": (r.stdout + r.stderr)[-2000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def answered(a):
    return a["rows"] == a["ref"]


def kept_one(st, where):
    es = [e for e in st["entries"] if e["table"] == "main.t"]
    return len(es) == 1 and es[0]["kept"] is True and es[0]["mine"] is False and \
        es[0]["where"] == where


def main():
    rep = Reporter("cache_keep")
    tmp = tempfile.mkdtemp(prefix="gpuagg_keep_")
    devices = [d for d in os.environ.get("CACHE_DEVICES", "cpu gpu").split()
               if d == "cpu" or GPU]
    # the knob: its values, and the error for any other
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(LIB)
    try:
        got = [cfg(con, "cache_keep"), cfg(con, "cache_keep", "off"), cfg(con, "cache_keep", "1"),
               json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["config"]
               .get("cache_keep")]
        try:
            cfg(con, "cache_keep", "maybe")
            got.append("no error")
        except sqlite3.OperationalError as e:
            got.append(str(e))
    except sqlite3.OperationalError as e:
        got = [str(e)]
    con.close()
    rep.check("knob", got == ["on", "off", "on", "on",
                              "gpuagg_config: bad value for cache_keep: 'maybe' (valid: 'on' = "
                              "the cache outlives the process's last connection, 'off' = the "
                              "last connection to close frees it)"], repr(got))
    for device in devices:
        where = "gpu" if device == "gpu" else "host"
        for mode in ("delete", "wal"):
            scns = ["reopen", "write", "stale", "rename", "knob_off"]
            if mode == "wal":
                scns += ["checkpoint", "wal_alone"]
            for scn in scns:
                tag = "%s_%s_%s" % (device, mode, scn)
                o = run_child(scn, device, mode, os.path.join(tmp, tag + ".db"))
                if "error" in o:
                    rep.check(tag + "_ran", False, o["error"])
                    continue
                f, s = o["first"], o["second"]
                rep.check(tag + "_first", answered(f) and f["path"] == "cache", repr(f))
                rep.check(tag + "_second_exact", answered(s), repr(s))
                if scn == "reopen":
                    rep.check(tag + "_default_on", o["default"] == "on", repr(o["default"]))
                    rep.check(tag + "_kept_answer", s["path"] == "cache" and "kept" in s["why"]
                              and s["rows"] == f["rows"], repr(s))
                    st = o["after_state"]
                    rep.check(tag + "_one_load", st["loads"] == 1 and st["kept"] == 1
                              and st["connections"] == 1 and kept_one(st, where), repr(st))
                elif scn == "stale":
                    # marked stale by the reopened connection's proof, then
                    # its close was the last: the entry went with it
                    st = o["stale_state"]
                    rep.check(tag + "_uncached", s["path"] != "cache"
                              and s["rows"] != f["rows"], repr(s))
                    rep.check(tag + "_dropped_at_close", st["entries"] == [] and st["loads"] == 0,
                              repr(st))
                elif scn == "knob_off":
                    st = o["reopen_state"]
                    rep.check(tag + "_freed", s["path"] != "cache" and "kept" not in s["why"]
                              and st["entries"] == [] and st["kept"] == 0 and st["loads"] == 0,
                              repr((s, st)))
                    r = o.get("reload")
                    rep.check(tag + "_reload", r is not None and answered(r)
                              and r["path"] == "cache" and o["reload_state"]["loads"] == 1,
                              repr((r, o.get("reload_state"))))
                else:
                    # write, rename, checkpoint, wal_alone: never from the
                    # kept entry; gpu_cache loads the file's state again
                    rep.check(tag + "_uncached", s["path"] != "cache", repr(s))
                    if scn in ("write", "rename"):
                        rep.check(tag + "_changed", s["rows"] != f["rows"], repr((s, f)))
                    else:
                        rep.check(tag + "_same_rows", s["rows"] == f["rows"], repr((s, f)))
                    r = o.get("reload")
                    rep.check(tag + "_reload", r is not None and answered(r)
                              and r["path"] == "cache" and r["rows"] == s["rows"]
                              and o["reload_state"]["loads"] == 2, repr((r, o.get("reload_state"))))
                    if scn == "write":  # proven another state: stale for good
                        rep.check(tag + "_kept_seen", kept_one(o["reopen_state"], where),
                                  repr(o["reopen_state"]))
        tag = "%s_churn" % device
        o = run_child("churn", device, "-", os.path.join(tmp, tag + ".db"))
        rep.check(tag, "error" not in o and not o["errors"] and not o["alive"]
                  and o["cached"] == o["n"] and o["n"] > 0 and o["state"]["loads"] == 1
                  and o["state"]["connections"] == 1, repr(o)[:2000])
        tag = "%s_pandas" % device
        if importlib.util.find_spec("pandas") is None:  # (not imported here)
            rep.skip(tag, "pandas is not installed (apt-get install python3-pandas)")
            continue
        o = run_child("pandas", device, "-", os.path.join(tmp, tag, "p.db"))
        if "error" in o:
            rep.check(tag + "_ran", False, o["error"])
            continue
        calls = o["calls"]
        rep.check(tag + "_exact", all(c["df"] == c["ref"] and c["df2"] == c["ref"]
                                      for c in calls), repr(calls))
        rep.check(tag + "_from_cache", all(c["path"] == "cache" for c in calls)
                  and all("kept" in c["why"] for c in calls[1:]), repr(calls))
        rep.check(tag + "_one_load", [c["state"]["loads"] for c in calls] == [1, 1, 1]
                  and calls[-1]["state"]["kept"] == 1
                  and [e["where"] for e in calls[-1]["state"]["entries"]] == [where],
                  repr([c["state"] for c in calls]))
    shutil.rmtree(tmp, ignore_errors=True)
    rep.finish()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        scn, device, mode, path = sys.argv[2:6]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        res = (child_pandas(device, path) if scn == "pandas" else
               child_churn(device, path) if scn == "churn" else child(scn, device, mode, path))
        print(json.dumps(res))
    else:
        main()
