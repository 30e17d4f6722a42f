"""test_query_json.py — one statement (issue 40, session 4, part 1; suite
`query_json`): gpu_query_json (ext/query/query_json.c) and gpu_cache with
no column list (ext/cache/cache_fns.c rule 8).

  * gpu_query_json's rows equal the gpu_query table's of the same text
    (values, types, REAL bits, order), decoded from JSON by Python's json
    and by SQLite's own ->>: quotes, newlines and unicode in the text and in
    TEXT values, parameters by number, by name and with gaps, unbound ones
    NULL, -0.0, infinities, INT64 extremes, the shortest round-trip REALs;
  * plan reuse (rule 3): a second call of a text creates and prepares
    nothing (gpuagg_info's gpu_query_json counts, temp's schema_version);
    the cap of 16 texts drops the least recently used; a ROLLBACK or a DROP
    of a kept table, and a caller's own table under the hashed name; the
    text twice in one statement; a close with kept statements (a C
    sqlite3_close through ctypes: SQLITE_BUSY if one were left);
  * errors (rule 5): each names gpu_query_json and what to do;
  * DIRECTONLY: a view of the file cannot call it, a TEMP view can;
  * gpu_cache('t') and gpu_cache('t', '*'): every column, answers from it,
    the errors of such a list."""

import ctypes
import ctypes.util
import json
import os
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB, INT64_MAX, INT64_MIN, connect  # noqa: E402

MAX_PARAMS = 32
KEEP = 16


def info(con, part="gpu_query_json"):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])[part]


def err(con, sql, params=()):
    try:
        con.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


def via_json(con, text, params=()):
    rows = con.execute("SELECT row_json FROM gpu_query_json(?%s)" % (", ?" * len(params)),
                       (text,) + tuple(params)).fetchall()
    return [tuple(json.loads(r[0])) for r in rows]


def via_table(con, text, params=()):
    con.execute("DROP TABLE IF EXISTS temp.ref")
    con.execute("CREATE VIRTUAL TABLE temp.ref USING gpu_query(%s)" % ("'" + text.replace("'", "''") + "'"))
    rows = con.execute("SELECT * FROM temp.ref(%s)" % ", ".join("?" * len(params)), params).fetchall()
    con.execute("DROP TABLE temp.ref")
    return rows


def fnv1a(b):
    h = 0xcbf29ce484222325
    for ch in b:
        h = ((h ^ ch) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def fill(con):
    con.execute("CREATE TABLE t(k TEXT, x REAL, n INTEGER, v)")
    rows = [("north", 0.1, 1, 1), ("north", 0.2, 2, 2.5), ("o'b\"c\\d\n\te\x01", 1e100, 3, "x"),
            ("o'b\"c\\d\n\te\x01", 1.0, 4, None), ("o'b\"c\\d\n\te\x01", -1e100, 5, -0.0),
            ("ünï ☃ 𝄞", 1e308, INT64_MAX, INT64_MIN), ("ünï ☃ 𝄞", 1e308, -7, 1e-310), (None, -0.0, None, None)]
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)


def basic(rep, con):
    texts = [
        ("SELECT k, sum(x), total(x), count(*), min(v), max(v) FROM t GROUP BY k ORDER BY k", ()),
        ("SELECT k, sum(x) AS s FROM t WHERE k <> 'north' AND k <> 'a''b' GROUP BY k ORDER BY k", ()),
        ("SELECT k, count(*) FROM t WHERE n > ?1 GROUP BY k ORDER BY k", (2,)),
        ("SELECT k, count(*) FROM t WHERE n > :lo AND n < @hi OR k = $k GROUP BY k ORDER BY k",
         (0, 100, "north")),
        ("SELECT count(*), sum(n) FROM t WHERE (n > ?3 OR ?1 IS NULL) AND n < 100", (None, None, 1)),
        ("SELECT min(x), max(x), sum(x) FROM t WHERE x < 1", ()),                    # -0.0
        ("SELECT sum(x) AS \"a \"\"b\", avg(n) FROM t WHERE x > 1e300", ()),           # inf, quotes in a name
        ("SELECT max(n), min(n), max(v), min(v) FROM t WHERE k LIKE 'ü%'", ()),       # INT64 extremes, 1e-310
        ("SELECT sum(x) / 3, total(n) / 7.0, avg(x) FROM t WHERE x BETWEEN 0 AND 1", ()),
        ("SELECT k,\n  sum(x)\n  -- a comment, with a quote '\nFROM t GROUP BY k ORDER BY 2 DESC, 1", ()),
        ("SELECT k, count(*) FROM t WHERE k = 'nobody' GROUP BY k", ()),              # no row
    ]
    for i, (text, params) in enumerate(texts):
        want = via_table(con, text, params)
        got = via_json(con, text, params)
        rep.check("rows_%d" % i, repr(got) == repr(want), "%s\n  got  %r\n  want %r" % (text, got, want))
    got = err(con, "SELECT * FROM gpu_query_json('SELECT sum(n) FROM t')")
    rep.check("overflow", got == "gpu_query_json: integer overflow", repr(got))
    # SQLite's own JSON reader gives the same values back (->>: REAL stays REAL)
    text = texts[0][0]
    want = via_table(con, text)
    got = con.execute("SELECT row_json ->> 0, row_json ->> 1, row_json ->> 2, row_json ->> 3, "
                      "row_json ->> 4, row_json ->> 5 FROM gpu_query_json(?)", (text,)).fetchall()
    rep.check("sqlite_reads_back", repr(got) == repr(want), "got %r\nwant %r" % (got, want))
    # unbound parameters are NULL, as in gpu_query; hidden columns read back
    got = con.execute("SELECT row_json, sql, p1, p2 FROM gpu_query_json(?, 5)",
                      ("SELECT count(*) FROM t WHERE n > ?1 OR ?2 IS NULL",)).fetchall()
    rep.check("unbound_null", got and json.loads(got[0][0]) == [8] and got[0][2:] == (5, None), repr(got))
    got = con.execute("SELECT row_json FROM gpu_query_json WHERE sql = ? AND p1 = 3",
                      ("SELECT count(*) FROM t WHERE n > ?1",)).fetchall()
    rep.check("bound_by_constraints", got == [("[3]",)], repr(got))


def reals(rep):
    """The shortest REAL that reads back, through a table of values."""
    import random
    con = connect()
    con.execute("CREATE TABLE r(g INTEGER, x REAL)")
    rnd = random.Random(40)
    vals = [0.1, 0.2, 0.30000000000000004, 1 / 3, 2 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
            123456789012345680.0, 1e16, 1e15, 123456.0, 9007199254740993.0, -0.0, 0.0, 100.0, 1e21, 1e22, 1.5e-7]
    vals += [struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0] for _ in range(3000)]
    vals = [v for v in vals if v == v and abs(v) != float("inf")]
    con.executemany("INSERT INTO r VALUES (?, ?)", list(enumerate(vals)))
    vals = [r[0] for r in con.execute("SELECT x FROM r ORDER BY g")]  # as stored (-0.0 is 0.0 there)
    text = "SELECT g, max(x) FROM r GROUP BY g ORDER BY g"
    got = via_json(con, text)
    bad = [(g, x, vals[g]) for g, x in got if not (isinstance(x, float) and x.hex() == vals[g].hex())]
    rep.check("reals_python_json", len(got) == len(vals) and not bad, repr(bad[:5]))
    got = con.execute("SELECT row_json ->> 1 FROM gpu_query_json(?)", (text,)).fetchall()
    bad = [(i, r[0], vals[i]) for i, r in enumerate(got)
           if not (isinstance(r[0], float) and r[0].hex() == vals[i].hex())]
    rep.check("reals_sqlite_json", len(got) == len(vals) and not bad, repr(bad[:5]))
    # the shortest of 15, 16 and 17 digits, with '.0' where it would read as an INTEGER
    want = {0.1: "0.1", 0.2: "0.2", 0.30000000000000004: "0.30000000000000004", 1 / 3: "0.3333333333333333",
            1e16: "1e+16", 1e15: "1e+15", 123456.0: "123456.0", 100.0: "100.0",
            9007199254740993.0: "9007199254740992.0", 1e21: "1e+21", 1.5e-7: "1.5e-07",
            1.7976931348623157e308: "1.7976931348623157e+308"}
    got = {}
    for x in want:
        r = con.execute("SELECT row_json FROM gpu_query_json('SELECT max(x) FROM r WHERE x = ?1', ?)", (x,)).fetchone()
        got[x] = r[0][1:-1] if r else None
    rep.check("reals_shortest", got == want, "%r" % {k: (got[k], want[k]) for k in want if got[k] != want[k]})
    con.close()


def reuse(rep, con):
    text = "SELECT k, sum(n) FROM t GROUP BY k ORDER BY k"
    via_json(con, text)
    a = info(con)
    sv = con.execute("PRAGMA temp.schema_version").fetchone()[0]
    for _ in range(3):
        via_json(con, text)
    b = info(con)
    sv2 = con.execute("PRAGMA temp.schema_version").fetchone()[0]
    rep.check("reuse_counts", b["calls"] == a["calls"] + 3 and b["created"] == a["created"] and
              b["prepared"] == a["prepared"] and b["reused"] == a["reused"] + 3, "%r -> %r" % (a, b))
    rep.check("reuse_no_ddl", sv == sv2, "temp schema_version %d -> %d" % (sv, sv2))
    # the table's name: FNV-1a 64 of the text's bytes
    name = "gpuagg_json_%016x" % fnv1a(text.encode())
    got = con.execute("SELECT sql FROM temp.sqlite_schema WHERE name = ?", (name,)).fetchone()
    rep.check("hash_name", got is not None and got[0] == 'CREATE VIRTUAL TABLE "%s" USING gpu_query(%s)'
              % (name, "'" + text.replace("'", "''") + "'"), repr(got))
    # one text twice in one statement: the second cursor prepares its own
    a = info(con)
    got = con.execute("SELECT count(*) FROM gpu_query_json(?1) AS a, gpu_query_json(?1) AS b",
                      (text,)).fetchone()[0]
    b = info(con)
    n = len(via_table(con, text))
    rep.check("twice_in_one_statement", got == n * n and b["created"] == a["created"] and
              b["prepared"] >= a["prepared"] + 1, "%d rows (want %d), %r -> %r" % (got, n * n, a, b))


def cap(rep):
    con = connect()
    fill(con)
    texts = ["SELECT count(*) + %d FROM t" % i for i in range(KEEP + 4)]
    for tx in texts:
        via_json(con, tx)
    i = info(con)
    tables = con.execute("SELECT count(*) FROM temp.sqlite_schema WHERE name LIKE 'gpuagg_json_%' "
                         "AND name NOT LIKE '%_groups'").fetchone()[0]
    rep.check("cap_kept", i["kept"] == KEEP and i["dropped"] == 4 and tables == KEEP, "%r, %d tables" % (i, tables))
    # the least recently used went: the first four; the fifth is kept
    via_json(con, texts[4])
    j = info(con)
    via_json(con, texts[0])
    k = info(con)
    rep.check("cap_lru", j["created"] == i["created"] and k["created"] == i["created"] + 1 and
              via_json(con, texts[0]) == [(8,)], "%r %r %r" % (i, j, k))
    # the bytes cap: one text past 1 MiB of kept texts evicts others
    big = "SELECT count(*) FROM t WHERE k <> '%s'" % ("y" * 600000)
    via_json(con, big)
    via_json(con, big.replace("y", "z"))
    m = info(con)
    rep.check("cap_bytes", m["kept"] < KEEP and m["dropped"] > k["dropped"], "%r" % m)
    con.close()


def lifecycle(rep, con):
    text = "SELECT count(*), sum(x) FROM t WHERE n > 1"
    want = via_table(con, text)
    # created inside a transaction that rolls back: made again
    con.execute("BEGIN")
    via_json(con, text)
    con.execute("ROLLBACK")
    a = info(con)
    got = via_json(con, text)
    b = info(con)
    rep.check("rollback_remade", got == want and b["created"] == a["created"] + 1, "%r %r %r" % (got, a, b))
    # dropped by the caller: made again
    name = "gpuagg_json_%016x" % fnv1a(text.encode())
    con.execute('DROP TABLE temp."%s"' % name)
    got = via_json(con, text)
    c = info(con)
    rep.check("drop_remade", got == want and c["created"] == b["created"] + 1, "%r %r" % (got, c))
    # the caller's own table under the hashed name: never read, never dropped
    text2 = "SELECT count(*) FROM t WHERE n < 3"
    name2 = "gpuagg_json_%016x" % fnv1a(text2.encode())
    con.execute('CREATE TEMP TABLE "%s"(a, b)' % name2)
    con.execute('INSERT INTO temp."%s" VALUES (1, 2)' % name2)
    got = via_json(con, text2)
    own = con.execute('SELECT * FROM temp."%s"' % name2).fetchall()
    alt = con.execute("SELECT count(*) FROM temp.sqlite_schema WHERE name = ?", (name2 + "_1",)).fetchone()[0]
    rep.check("collision_next_name", got == [(3,)] and own == [(1, 2)] and alt == 1, "%r %r %r" % (got, own, alt))
    con.execute('DROP TABLE temp."%s"' % name2)


def errors(rep, con):
    cases = [
        ("missing_text", "SELECT * FROM gpu_query_json", (),
         "gpu_query_json: the first argument is the text of one SELECT: SELECT row_json FROM "
         "gpu_query_json('SELECT ...', p1, p2, ...)"),
        ("null_text", "SELECT * FROM gpu_query_json(NULL)", (),
         "gpu_query_json: the first argument must be the text of one SELECT, not NULL"),
        ("number_text", "SELECT * FROM gpu_query_json(5)", (),
         "gpu_query_json: the first argument must be the text of one SELECT, not a number or a BLOB"),
        ("grammar", "SELECT * FROM gpu_query_json('SELECT nope FROM t')", (),
         "gpu_query_json: no such column: nope"),
        ("grammar_construct", "SELECT * FROM gpu_query_json('SELECT k FROM t UNION SELECT k FROM t')", (),
         "gpu_query_json: "),
        ("too_many_args_none", "SELECT * FROM gpu_query_json('SELECT count(*) FROM t', 1)", (),
         "gpu_query_json: the query takes no parameters, got 1 argument after the text"),
        ("too_many_args", "SELECT * FROM gpu_query_json('SELECT count(*) FROM t WHERE n > ?1', 1, 2, 3)", (),
         "gpu_query_json: the query takes 1 parameter (?1 .. ?1), got 3 arguments after the text"),
        ("past_max", "SELECT * FROM gpu_query_json('SELECT count(*) FROM t WHERE n > ?%d')" % (MAX_PARAMS + 1), (),
         "gpu_query_json: the query has %d parameters, more than the %d it binds; run it as a gpu_query "
         "table: CREATE VIRTUAL TABLE temp.q USING gpu_query('SELECT ...'); SELECT * FROM q(p1, p2, ...)"
         % (MAX_PARAMS + 1, MAX_PARAMS)),
        ("blob", "SELECT * FROM gpu_query_json('SELECT max(b) FROM blobs')", (),
         "gpu_query_json: the result column max(b) holds a BLOB, which JSON cannot hold; select hex(...) "
         "of it in the text, or read it from a gpu_query table"),
        ("sqlite_arg_limit", "SELECT * FROM gpu_query_json('x'%s)" % (", 1" * (MAX_PARAMS + 1)), (),
         "too many arguments on gpu_query_json() - max %d" % (MAX_PARAMS + 1)),
    ]
    con.execute("CREATE TABLE blobs(b)")
    con.execute("INSERT INTO blobs VALUES (x'00ff')")
    for name, sql, params, want in cases:
        got = err(con, sql, params)
        ok = got is not None and (got.startswith(want) if want.endswith(": ") else got == want)
        rep.check("error_" + name, ok, "got %r\n  want %r" % (got, want))
    got = err(con, "SELECT * FROM gpu_query_json(CAST(? AS TEXT))", ("SELECT count(*) FROM t\x00 x",))
    rep.check("error_nul", got == "gpu_query_json: the text holds a NUL character, which ends SQLite's text",
              repr(got))
    # exactly MAX_PARAMS parameters bind
    text = "SELECT count(*) FROM t WHERE n > ?1 + ?%d" % MAX_PARAMS
    got = con.execute("SELECT row_json FROM gpu_query_json(?%s)" % (", 0" * MAX_PARAMS), (text,)).fetchall()
    rep.check("max_params_bind", got == [("[6]",)], repr(got))
    # DIRECTONLY: not from a view of the file; from a TEMP view, yes
    con.execute("CREATE VIEW v_json AS SELECT * FROM gpu_query_json('SELECT count(*) FROM t')")
    got = err(con, "SELECT * FROM v_json")
    rep.check("directonly_view", got is not None and "unsafe use of virtual table" in got, repr(got))
    con.execute("DROP VIEW v_json")
    con.execute("CREATE TEMP VIEW tv_json AS SELECT * FROM gpu_query_json('SELECT count(*) FROM t')")
    got = con.execute("SELECT * FROM tv_json").fetchall()
    rep.check("directonly_temp_view", got == [("[8]",)], repr(got))


def close_with_kept(rep):
    """sqlite3_close (not _v2) fails with SQLITE_BUSY while a statement is
    unfinalized: the kept statements must go at xDisconnect (rule 6)."""
    path = ctypes.util.find_library("sqlite3")
    if not path:
        rep.skip("close_with_kept", "no libsqlite3 for ctypes")
        return
    lib = ctypes.CDLL(path)
    lib.sqlite3_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.sqlite3_close.argtypes = [ctypes.c_void_p]
    lib.sqlite3_exec.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_char_p)]
    lib.sqlite3_enable_load_extension.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.sqlite3_load_extension.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_char_p)]
    db = ctypes.c_void_p()
    lib.sqlite3_open(b":memory:", ctypes.byref(db))
    lib.sqlite3_enable_load_extension(db, 1)
    msg = ctypes.c_char_p()
    rc = lib.sqlite3_load_extension(db, LIB.encode(), None, ctypes.byref(msg))
    sql = (b"CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2), (1, 3);"
           b"SELECT * FROM gpu_query_json('SELECT a, sum(b) FROM t GROUP BY a');"
           b"SELECT * FROM gpu_query_json('SELECT count(*) FROM t WHERE a > ?1', 0);")
    rc2 = lib.sqlite3_exec(db, sql, None, None, ctypes.byref(msg))
    rc3 = lib.sqlite3_close(db)
    rep.check("close_with_kept", rc == 0 and rc2 == 0 and rc3 == 0,
              "load %d exec %d close %d (5: SQLITE_BUSY, a statement left) %r" % (rc, rc2, rc3, msg.value))


def file_db(rep):
    """On a file: the parallel path behind it, a second connection's own
    tables (temp is per connection)."""
    tmp = tempfile.mkdtemp(prefix="gpuagg_qjson_")
    path = os.path.join(tmp, "f.db")
    con = connect(path)
    con.execute("CREATE TABLE s(g INTEGER, x REAL)")
    con.execute("BEGIN")
    con.executemany("INSERT INTO s VALUES (?, ?)", [(i % 7, (i % 13) * 0.1) for i in range(30000)])
    con.execute("COMMIT")
    con.execute("SELECT gpuagg_config('scan_min_rows', 1000)")
    text = "SELECT g, sum(x), avg(x), count(*) FROM s WHERE x > ?1 GROUP BY g ORDER BY g"
    want = via_table(con, text, (0.3,))
    got = via_json(con, text, (0.3,))
    path_of = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]["path"]
    rep.check("file_parallel", got == want and repr(got) == repr(want) and path_of == "parallel",
              "path %s\n%r\n%r" % (path_of, got[:3], want[:3]))
    # another statement of the connection running: the serial path, as a gpu_query table's
    cur = con.execute("SELECT g FROM s")
    cur.fetchone()
    got = via_json(con, text, (0.3,))
    ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
    rep.check("other_statement_serial", repr(got) == repr(want) and ls["path"] == "serial" and
              ls["why"].startswith("another statement of the connection is running"), repr(ls))
    cur.close()
    other = connect(path)
    got2 = via_json(other, text, (0.3,))
    rep.check("second_connection", repr(got2) == repr(want) and info(other)["created"] == 1, repr(info(other)))
    other.close()
    con.close()
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


def cache_every(rep):
    con = connect()
    con.execute("CREATE TABLE c(a INTEGER, b REAL, \"c d\" TEXT, e AS (a * 2))")
    con.executemany("INSERT INTO c(a, b, \"c d\") VALUES (?, ?, ?)", [(i, i * 0.5, "k%d" % (i % 3)) for i in range(100)])
    for name, call in (("cache_no_list", "SELECT gpu_cache('c')"), ("cache_star", "SELECT gpu_cache('c', ' * ')")):
        con.execute("SELECT gpu_cache_drop()")
        rows = con.execute(call).fetchone()[0]
        ent = info(con, "cache")["entries"]
        cols = ent[0]["columns"] if ent else None
        rep.check(name, rows == 100 and cols == ["a", "b", "c d", "e"], "%r %r" % (rows, ent))
    got = con.execute("SELECT row_json FROM gpu_query_json('SELECT \"c d\", sum(b), max(e) FROM c "
                      "GROUP BY \"c d\" ORDER BY 1')").fetchall()
    ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
    rep.check("cache_every_answers", ls["path"] == "cache" and len(got) == 3 and
              json.loads(got[0][0]) == ["k0", sum(i * 0.5 for i in range(0, 100, 3)), 198],
              "%r %r" % (ls.get("path"), got))
    con.execute("CREATE TABLE cb(a, b)")
    con.execute("INSERT INTO cb VALUES (1, x'00')")
    got = err(con, "SELECT gpu_cache('cb')")
    rep.check("cache_every_blob", got == "gpu_cache: column b holds BLOB values (INTEGER, REAL, TEXT and NULL "
              "can be cached); without a column list every column is cached: name the columns the queries "
              "read, gpu_cache('cb', 'x, k, y')", repr(got))
    got = err(con, "SELECT gpu_cache('cb', 'b')")
    rep.check("cache_list_blob", got == "gpu_cache: column b holds BLOB values (INTEGER, REAL, TEXT and NULL "
              "can be cached)", repr(got))
    con.execute("CREATE TABLE wide(%s)" % ", ".join("c%d" % i for i in range(65)))
    got = err(con, "SELECT gpu_cache('wide')")
    rep.check("cache_every_wide", got == "gpu_cache: wide has 65 columns, more than the 64 an entry holds; "
              "name the columns the queries read: gpu_cache('wide', 'x, k, y')", repr(got))
    got = err(con, "SELECT gpu_cache('c', '*, a')")
    rep.check("cache_star_in_list", got == "gpu_cache: no such column: *", repr(got))
    got = err(con, "SELECT gpu_cache('nope')")
    rep.check("cache_every_no_table", got is not None and got.startswith("gpu_cache: no such table"), repr(got))
    con.close()


def section(rep, fn, *args):
    """One part; an exception (a build without gpu_query_json: no such
    table) is that part's failure, and the others still run."""
    try:
        fn(rep, *args)
    except Exception as e:  # noqa: BLE001
        rep.check(fn.__name__ + "_ran", False, "%s: %s" % (type(e).__name__, e))


def main():
    rep = Reporter("query_json")
    con = connect()
    fill(con)
    for fn in (basic, reuse, lifecycle, errors):
        section(rep, fn, con)
    con.close()
    for fn in (reals, cap, close_with_kept, file_db, cache_every):
        section(rep, fn)
    rep.finish()


if __name__ == "__main__":
    main()
