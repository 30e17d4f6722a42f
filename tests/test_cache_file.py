"""test_cache_file.py — gpu_cache's cache files (issue 40, part 3).

A load writes its host entry to <db>-gpuagg (or under cache_dir); a new
process's gpu_cache maps a valid file instead of loading from rows.  Every
answer a new process gives from a mapped file must equal, bit for bit and
type for type, the uncached path's on the same database; every state that
the file does not stand for must load from rows (and answer the new rows).
Checked here, each in new processes (subprocesses of /usr/bin/python3):
  - a file written, then mapped by another process (gpuagg_info's source
    "file", queries answered by the cache, threads 1 and 4), a second
    table kept in the same file, a column list other than the file's, the
    file's mode taken from the database;
  - rollback journal: an UPDATE, a schema change; the database replaced by
    rename with a file built alike, and rewritten in place with the same
    size, header and timestamps (only the change time differs);
  - WAL: mapped while the same WAL is present; the trap of the issue (an
    in-place UPDATE, a checkpoint and a close leave the 100-byte header
    byte-identical while a value changed: the WAL is gone, so it reloads);
    a WAL reset (new salts) with frames again;
  - damaged files: truncated, a flipped bit in a column block, in the
    header, in a dictionary; each refused with its reason, the answer from
    rows, and the file written anew;
  - four processes writing the file at once: a valid file, no temporary
    left;
  - on a GPU (the fake backend under make test, a real one under make
    test-gpu): the entry is built in host memory, written, copied to the
    device; a new process maps the file and copies it (threads 1 and 4),
    answered on the GPU; a damaged file loads from rows;
  - permissions: mode=ro and immutable write nothing; a read-only directory
    writes nothing, cache_dir then works; a file writable by others, owned
    by another user, or a symlink is refused; the budget.
"""

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_cfile_")
os.chmod(TMP, 0o755)
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
ROWS = int(os.environ.get("CFILE_ROWS", "60000"))
COLS = "grp, rows, count, sum, total, avg, min, max"

# (x, filter, group): gpu_aggregate calls the mapped entry must answer
QUERIES = [
    ("x", None, None),
    ("x", None, "k"),
    ("y", "k >= 3 AND k < 9", "k"),
    ("x", "s = 'v7'", "s"),
    ("n", None, "s"),
    ("m", "y > 100", None),
    ("x + y", "x IS NOT NULL", "k"),
    ("y", "s IN ('v1', 'v2', 'v11')", "s"),
]

# The child: load the extension, set knobs, gpu_cache, run the queries;
# prints one JSON line: the results (typed), last_scan paths, the cache info.
CHILD = r"""
import json, sqlite3, struct, sys
lib, path, conf, tables, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), json.loads(sys.argv[5])
uri = path.startswith("file:")
con = sqlite3.connect(path, isolation_level=None, uri=uri)
con.enable_load_extension(True)
con.load_extension(lib)
for k, v in [("scan_min_rows", 0), ("device", "cpu"), ("cache_file", "on")] + conf:
    con.execute("select gpuagg_config(?, ?)", (k, v))
def enc(v):
    if isinstance(v, float):
        return ["real", struct.pack("<d", v).hex()]
    if isinstance(v, bytes):
        return ["blob", v.hex()]
    return [type(v).__name__, v]
out = {"cache": [], "results": [], "paths": [], "errors": []}
for t in tables:
    try:
        out["cache"].append(con.execute("select gpu_cache(?, ?)", t).fetchone()[0])
    except sqlite3.Error as e:
        out["errors"].append(str(e))
for t, x, f, g in queries:
    rows = con.execute("select %s from gpu_aggregate(?, ?, ?, ?)" % COLS, (t, x, f, g)).fetchall()
    out["results"].append(sorted([[enc(v) for v in r] for r in rows], key=repr))
    out["paths"].append(json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]["path"])
out["info"] = json.loads(con.execute("select gpuagg_info()").fetchone()[0])["cache"]
print(json.dumps(out))
""".replace("COLS", repr(COLS))


def child(path, tables=(("t", "*"),), queries=(), conf=(), user=None):
    """Run CHILD in a new process; its JSON."""
    qs = [["t"] + list(q) if len(q) == 3 else list(q) for q in queries]
    kw = {}
    if user is not None:
        kw["preexec_fn"] = lambda: (os.setgid(user), os.setuid(user))
    p = subprocess.run([PY, "-c", CHILD, LIB, path, json.dumps(list(conf)),
                        json.dumps([list(t) for t in tables]), json.dumps(qs)],
                       capture_output=True, text=True, **kw)
    if p.returncode != 0:
        return {"crash": p.stderr[-2000:], "cache": [], "results": [], "paths": [],
                "errors": [p.stderr[-300:]], "info": {"entries": [], "file": {}}}
    return json.loads(p.stdout)


def reference(path, queries, table="t"):
    """The uncached path's answers (a plain connection, no cache)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("select gpuagg_config('device', 'cpu')")
    out = []
    import struct
    for q in queries:
        t, x, f, g = ([table] + list(q)) if len(q) == 3 else q
        rows = con.execute("select %s from gpu_aggregate(?, ?, ?, ?)" % COLS,
                           (t, x, f, g)).fetchall()
        out.append(sorted([[["real", struct.pack("<d", v).hex()] if isinstance(v, float)
                             else [type(v).__name__, v] for v in r] for r in rows], key=repr))
    con.close()
    return out


def make_db(path, mode="delete", n=ROWS, seed=1, bump=None):
    """The test table t (and u): INTEGER, REAL, NUMERIC, TEXT, untyped."""
    for suf in ("", "-wal", "-shm", "-journal", "-gpuagg"):
        if os.path.exists(path + suf):
            os.unlink(path + suf)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("pragma journal_mode=%s" % mode)
    con.execute("create table t(x REAL, k INTEGER, y INTEGER, n NUMERIC, s TEXT, m)")
    con.execute("create table u(a INTEGER, b REAL)")
    import random
    r = random.Random(seed)
    specials = [-0.0, 0.0, 5.0, 1e300, -1e300, float("inf"), float("-inf"), 0.1, 2.5]
    rows = []
    for i in range(n):
        x = r.choice([None, r.uniform(-1e4, 1e4), r.choice(specials), r.randint(-9, 9)])
        m = r.choice([None, r.randint(-50, 50), r.uniform(-5, 5), 9007199254740993])
        rows.append((x, r.randint(0, 12), r.randint(0, 1000) if r.random() > 0.05 else None,
                     r.choice([None, r.randint(0, 99), r.uniform(0, 1)]),
                     None if r.random() < 0.05 else "v%d" % r.randint(0, 15), m))
    if bump is not None:  # one value differs: a database built alike
        rows[bump] = (123.5,) + rows[bump][1:]
    con.execute("begin")
    con.executemany("insert into t values(?,?,?,?,?,?)", rows)
    con.executemany("insert into u values(?,?)", [(i % 17, i * 0.25) for i in range(5000)])
    con.execute("commit")
    con.close()


def entry(out, table="main.t"):
    for e in out["info"].get("entries", []):
        if e["table"] == table:
            return e
    return None


def check_answers(rep, name, path, out, want_source, queries=QUERIES):
    """Bit-identical answers, from the cache, with the entry's source."""
    ref = reference(path, queries)
    e = entry(out)
    ok = not out.get("crash") and e is not None and e["source"] == want_source
    rep.check(name + "_source", ok, "%r / %r / %r" % (e and e.get("source"), out.get("crash"),
                                                      out["info"].get("file")))
    rep.check(name + "_same", out["results"] == ref,
              "first differing: %r" % next(((a, b) for a, b in zip(out["results"], ref)
                                            if a != b), None))
    rep.check(name + "_cached", all(p == "cache" for p in out["paths"]), repr(out["paths"]))


def last(out):
    f = out["info"].get("file", {})
    return "%s | %s" % (f.get("map", ""), f.get("write", ""))


def section_basic(rep):
    d = os.path.join(TMP, "basic")
    os.makedirs(d)
    path = os.path.join(d, "a.db")
    make_db(path)
    os.chmod(path, 0o640)
    out = child(path, queries=QUERIES)
    rep.check("basic_written", out["info"]["file"].get("writes") == 1 and
              os.path.exists(path + "-gpuagg"), last(out))
    check_answers(rep, "basic_load", path, out, "rows")
    mode = os.stat(path + "-gpuagg").st_mode if os.path.exists(path + "-gpuagg") else 0
    rep.check("basic_mode", stat.S_IMODE(mode) == 0o640, oct(mode))
    for th in (1, 4):
        out = child(path, queries=QUERIES, conf=[("threads", th)])
        check_answers(rep, "basic_map_t%d" % th, path, out, "file")
        rep.check("basic_map_t%d_counts" % th, out["info"]["file"].get("maps") == 1 and
                  out["info"]["file"].get("writes") == 0, repr(out["info"]["file"]))
    # a second table kept in the same file (cache_file.h rule 4)
    out = child(path, tables=(("u", "*"),))
    rep.check("basic_second_written", "wrote" in last(out), last(out))
    out = child(path, tables=(("t", "*"), ("u", "a, b")), queries=QUERIES)
    check_answers(rep, "basic_both", path, out, "file")
    rep.check("basic_both_u", (entry(out, "main.u") or {}).get("source") == "file",
              repr(entry(out, "main.u")))
    # other columns than the file's: loaded from rows, written anew
    out = child(path, tables=(("t", "x, k"),), queries=[("x", None, "k")])
    rep.check("basic_other_cols", (entry(out) or {}).get("source") == "rows" and
              "other columns" in last(out) and "wrote" in last(out), last(out))
    check_answers(rep, "basic_other_cols_ans", path, out, "rows", [("x", None, "k")])
    out = child(path, tables=(("t", "x, k"),), queries=[("x", None, "k")])
    check_answers(rep, "basic_other_cols_map", path, out, "file", [("x", None, "k")])
    # off: nothing read or written
    out = child(path, conf=[("cache_file", "off")], queries=QUERIES[:2])
    check_answers(rep, "basic_off", path, out, "rows", QUERIES[:2])
    # the budget: the file does not fit (nor do rows)
    out = child(path, tables=(("t", "x, k"),), conf=[("cache_bytes", 4096)])
    rep.check("basic_budget", "cache_bytes" in last(out) and out["errors"], last(out))


def section_config(rep):
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(LIB)
    q = "select gpuagg_config(?, ?)"
    rep.check("config_default", con.execute("select gpuagg_config('cache_file')").fetchone()[0]
              == "off" and con.execute("select gpuagg_config('cache_dir')").fetchone()[0] == "")
    rep.check("config_on", con.execute(q, ("cache_file", "on")).fetchone()[0] == "on")
    rep.check("config_dir", con.execute(q, ("cache_dir", "/x/y")).fetchone()[0] == "/x/y")
    for name, value, want in [
            ("cache_file", "maybe", "gpuagg_config: bad value for cache_file: 'maybe' (valid: 'on'"),
            ("cache_dir", "rel/dir", "gpuagg_config: bad value for cache_dir: 'rel/dir' (valid: ''"),
            ("cache_dir", "/" + "a" * 600, "gpuagg_config: bad value for cache_dir:")]:
        try:
            con.execute(q, (name, value))
            got = "no error"
        except sqlite3.Error as e:
            got = str(e)
        rep.check("config_err_%s_%d" % (name, len(value)), got.startswith(want), got)
    info = json.loads(con.execute("select gpuagg_info()").fetchone()[0])
    rep.check("config_json", info["config"].get("cache_file") == "on" and
              info["config"].get("cache_dir_set") is True, repr(info["config"]))
    con.close()


def section_rollback(rep):
    d = os.path.join(TMP, "rb")
    os.makedirs(d)
    path = os.path.join(d, "r.db")
    make_db(path)
    child(path)
    out = child(path, queries=QUERIES[:3])
    check_answers(rep, "rb_map", path, out, "file", QUERIES[:3])
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("update t set x = 777.25 where rowid = 5")
    con.close()
    out = child(path, queries=QUERIES)
    check_answers(rep, "rb_update", path, out, "rows")
    rep.check("rb_update_why", "another state" in last(out) and
              "wrote" in last(out), last(out))
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "rb_update_remap", path, out, "file", QUERIES[:2])
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("create index ti on t(k)")
    con.close()
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "rb_schema", path, out, "rows", QUERIES[:2])
    # a mapped entry is stamped like a loaded one: another connection's
    # commit makes it stale (the uncached path answers the new rows)
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    for k, v in (("device", "cpu"), ("cache_file", "on"), ("scan_min_rows", 0)):
        con.execute("select gpuagg_config(?, ?)", (k, v))
    con.execute("select gpu_cache('t')")
    src = json.loads(con.execute("select gpuagg_info()").fetchone()[0])["cache"]
    rep.check("rb_inproc_map", src["entries"][0]["source"] == "file", repr(src["file"]))
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("update t set y = 5000 where rowid = 11")
    w.close()
    got = con.execute("select %s from gpu_aggregate('t', 'y', NULL, 'k')" % COLS).fetchall()
    ls = json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]
    ref = sqlite3.connect(path)
    ref.enable_load_extension(True)
    ref.load_extension(LIB)
    want = ref.execute("select %s from gpu_aggregate('t', 'y', NULL, 'k')" % COLS).fetchall()
    ref.close()
    con.close()
    rep.check("rb_inproc_stale", sorted(map(repr, got)) == sorted(map(repr, want)) and
              ls["path"] != "cache" and "stale" in ls["why"], repr(ls["why"]))


def header(path):
    with open(path, "rb") as f:
        return f.read(100)


def section_replaced(rep):
    d = os.path.join(TMP, "repl")
    os.makedirs(d)
    path = os.path.join(d, "p.db")
    alike = os.path.join(d, "alike.db")
    make_db(path)
    make_db(alike, bump=7)
    child(path)
    rep.check("repl_alike_header", header(path) == header(alike) and
              os.path.getsize(path) == os.path.getsize(alike))
    # rewritten in place: same inode, size, header, atime and mtime
    st = os.stat(path)
    with open(alike, "rb") as f:
        data = f.read()
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    out = child(path, queries=QUERIES)
    check_answers(rep, "repl_inplace", path, out, "rows")
    # renamed over: a new inode
    make_db(alike, bump=9)
    child(path)
    os.rename(alike, path)
    out = child(path, queries=QUERIES)
    check_answers(rep, "repl_rename", path, out, "rows")


def section_wal(rep):
    d = os.path.join(TMP, "wal")
    os.makedirs(d)
    path = os.path.join(d, "w.db")
    make_db(path, mode="wal")
    hold = sqlite3.connect(path, isolation_level=None)  # keeps the WAL
    hold.execute("insert into u values(1, 1.0)")
    out = child(path, queries=QUERIES[:2])
    rep.check("wal_written", "wrote" in last(out), last(out))
    out = child(path, queries=QUERIES)
    check_answers(rep, "wal_map", path, out, "file")
    # the trap: in-place UPDATE, checkpoint, close: the WAL is gone
    h0 = header(path)
    hold.execute("update t set y = y + 1 where rowid = 3")
    hold.execute("pragma wal_checkpoint(truncate)")
    hold.close()
    rep.check("wal_trap_gone", not os.path.exists(path + "-wal"))
    rep.check("wal_trap_header_same", header(path) == h0)
    out = child(path, queries=QUERIES)
    check_answers(rep, "wal_trap", path, out, "rows")
    rep.check("wal_trap_why", "no committed frame" in last(out), last(out))
    # a WAL with frames again, the file written; then a reset (new salts)
    hold = sqlite3.connect(path, isolation_level=None)
    hold.execute("insert into u values(2, 2.0)")
    child(path)
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "wal_map2", path, out, "file", QUERIES[:2])
    hold.execute("pragma wal_checkpoint(restart)")
    hold.execute("update t set y = y + 1 where rowid = 3")
    out = child(path, queries=QUERIES)
    check_answers(rep, "wal_reset", path, out, "rows")
    hold.close()


def damage(path, at, how):
    with open(path, "r+b") as f:
        if how == "truncate":
            f.truncate(os.path.getsize(path) - at)
            return
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x10]))


def section_damaged(rep):
    d = os.path.join(TMP, "dmg")
    os.makedirs(d)
    path = os.path.join(d, "g.db")
    make_db(path)
    fpath = path + "-gpuagg"
    size = None
    for name, at, how, why in [
            ("truncated", 100, "truncate", "truncated"),
            ("block", None, "flip", "checksum"),
            ("header", 40, "flip", "checksum"),
            ("dict", -20, "flip", "dictionary")]:
        child(path, tables=(("t", "*"),))
        size = os.path.getsize(fpath)
        pos = size // 2 if at is None else (size + at if at < 0 else at)
        damage(fpath, at if how == "truncate" else pos, how)
        out = child(path, queries=QUERIES[:4])
        check_answers(rep, "dmg_%s" % name, path, out, "rows", QUERIES[:4])
        rep.check("dmg_%s_why" % name, why in json.dumps(out["info"]) or
                  "damaged" in json.dumps(out["info"]), last(out))
        out = child(path, queries=QUERIES[:2])  # written anew by the last one
        check_answers(rep, "dmg_%s_anew" % name, path, out, "file", QUERIES[:2])


def section_race(rep):
    d = os.path.join(TMP, "race")
    os.makedirs(d)
    path = os.path.join(d, "c.db")
    make_db(path)
    qs = [["t"] + list(q) for q in QUERIES[:2]]
    procs = [subprocess.Popen([PY, "-c", CHILD, LIB, path, "[]",
                               json.dumps([["t", "*"]] if i % 2 else [["u", "*"], ["t", "*"]]),
                               json.dumps(qs)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate() for p in procs]
    rep.check("race_ok", all(p.returncode == 0 for p in procs), repr([o[1][-300:] for o in outs]))
    left = [f for f in os.listdir(d) if ".tmp-" in f]
    rep.check("race_no_tmp", not left, repr(left))
    out = child(path, queries=QUERIES)
    check_answers(rep, "race_map", path, out, "file")


def section_perms(rep):
    d = os.path.join(TMP, "perm")
    os.makedirs(d)
    path = os.path.join(d, "q.db")
    make_db(path)
    # mode=ro and immutable write nothing
    out = child("file:%s?mode=ro" % path, queries=QUERIES[:1])
    rep.check("perm_ro", not os.path.exists(path + "-gpuagg") and "read-only" in last(out),
              last(out))
    out = child("file:%s?immutable=1" % path, queries=QUERIES[:1])
    rep.check("perm_immutable", not os.path.exists(path + "-gpuagg") and
              "immutable" in last(out), last(out))
    child(path)
    fpath = path + "-gpuagg"
    out = child("file:%s?mode=ro" % path, queries=QUERIES[:2])
    check_answers(rep, "perm_ro_maps", path, out, "file", QUERIES[:2])
    # writable by others
    os.chmod(fpath, 0o646)
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "perm_other_w", path, out, "rows", QUERIES[:2])
    rep.check("perm_other_w_why", "writable by others" in json.dumps(out["info"]), last(out))
    # a symlink to a valid file
    child(path)
    real = os.path.join(d, "real-gpuagg")
    os.rename(fpath, real)
    os.symlink(real, fpath)
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "perm_symlink", path, out, "rows", QUERIES[:2])
    rep.check("perm_symlink_why", "symbolic link" in json.dumps(out["info"]), last(out))
    rep.check("perm_symlink_target_kept", os.path.exists(real))
    if os.path.islink(fpath):
        os.unlink(fpath)
    if os.geteuid() != 0:
        rep.skip("perm_owner", "not root: cannot give the file to another user")
        rep.skip("perm_rodir", "not root")
        return
    # owned by another user
    child(path)
    os.chown(fpath, 65534, 65534)
    out = child(path, queries=QUERIES[:2])
    check_answers(rep, "perm_owner", path, out, "rows", QUERIES[:2])
    rep.check("perm_owner_why", "owned by user" in json.dumps(out["info"]), last(out))
    # a read-only directory: nothing written; cache_dir then
    rd = os.path.join(TMP, "rodir")
    os.makedirs(rd)
    rpath = os.path.join(rd, "ro.db")
    make_db(rpath)
    cdir = os.path.join(TMP, "cdir")
    os.makedirs(cdir)
    for p in (rd, rpath, cdir):
        os.chown(p, 65534, 65534)
    os.chmod(rd, 0o555)
    out = child(rpath, queries=QUERIES[:2], user=65534)
    rep.check("perm_rodir", out["cache"] and os.listdir(rd) == ["ro.db"] and
              "not written" in last(out), last(out) + repr(out.get("crash")))
    out = child(rpath, queries=QUERIES[:2], conf=[("cache_dir", cdir)], user=65534)
    rep.check("perm_cachedir_written", "wrote " + cdir in last(out) and
              len(os.listdir(cdir)) == 1, last(out))
    out = child(rpath, queries=QUERIES[:2], conf=[("cache_dir", cdir)], user=65534)
    check_answers(rep, "perm_cachedir_map", rpath, out, "file", QUERIES[:2])


def section_gpu(rep):
    """GPUAGG_TEST_GPU=1 (the fake backend under make test, a real GPU under
    make test-gpu): a GPU entry is built in host memory, written, and copied
    to the device; a new process maps the file and copies it there."""
    d = os.path.join(TMP, "gpu")
    os.makedirs(d)
    path = os.path.join(d, "g.db")
    make_db(path, n=ROWS * 2)
    conf = [("device", "gpu")]
    out = child(path, queries=QUERIES, conf=conf)
    e = entry(out) or {}
    rep.check("gpu_written", "wrote" in last(out) and e.get("where") == "gpu" and
              "copied to the GPU" in e.get("how", ""), "%s | %r" % (last(out), e))
    check_answers(rep, "gpu_load", path, out, "rows")
    for th in (1, 4):
        out = child(path, queries=QUERIES, conf=conf + [("threads", th)])
        e = entry(out) or {}
        rep.check("gpu_map_t%d_where" % th, e.get("where") == "gpu" and
                  "copied to the GPU" in e.get("how", ""), repr(e))
        check_answers(rep, "gpu_map_t%d" % th, path, out, "file")
        rep.check("gpu_map_t%d_on_gpu" % th, out["info"].get("queries_gpu", 0) > 0,
                  repr(out["info"].get("queries_gpu")))
    damage(path + "-gpuagg", os.path.getsize(path + "-gpuagg") // 3, "flip")
    out = child(path, queries=QUERIES, conf=conf)
    check_answers(rep, "gpu_damaged", path, out, "rows")
    rep.check("gpu_damaged_where", (entry(out) or {}).get("where") == "gpu",
              repr(entry(out)))


def main():
    rep = Reporter("cache_file")
    only = os.environ.get("CFILE_ONLY", "").split()
    for name, fn in [("config", section_config), ("basic", section_basic),
                     ("rollback", section_rollback),
                     ("replaced", section_replaced), ("wal", section_wal),
                     ("damaged", section_damaged), ("race", section_race),
                     ("perms", section_perms), ("gpu", section_gpu)]:
        if name == "gpu" and not GPU:
            rep.skip("gpu", "GPUAGG_TEST_GPU is not 1")
            continue
        if not only or name in only:
            fn(rep)
    shutil.rmtree(TMP, ignore_errors=True)
    rep.finish()


if __name__ == "__main__":
    main()
