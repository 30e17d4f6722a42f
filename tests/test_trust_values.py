"""test_trust_values.py — values the extension must see as SQLite sees them
(issue 22, trust round 2: values).

  - the text encoding is cached only once it can no longer change: after a
    PRAGMA encoding on an empty database, gpu_max/gpu_min (and their states)
    compare and return text in the new encoding, as max()/min() do;
  - gpu_aggregate's group keys in a UTF-16 database: BINARY groups the bytes
    of the database encoding (two different malformed surrogate sequences
    are two groups, as in GROUP BY), and the key returned is the original
    text (value, typeof and hex() equal to the plain GROUP BY's), on the
    serial and the parallel path (hash and sorted modes), and with NOCASE
    and RTRIM (registered for UTF-8 only: SQLite converts for those).

Every check compares with SQLite's own answer on the same connection.
"""

import json
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_values_")
rep = Reporter("trust_values")


def connect(path, **kw):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, **kw)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    return con


def fresh(name):
    path = os.path.join(TMP, name)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def one(con, sql, params=()):
    try:
        return con.execute(sql, params).fetchone()
    except sqlite3.Error as e:
        return ("error", str(e))


# ------------------------------------------------------------ 1. the encoding

# U+FF41 and U+1F600: UTF-16le bytes 41FF and 3DD800DE (41 > 3D: the first
# is the max), UTF-8 EFBD81 and F09F9880 (the second is)
A, B = "\uff41", "\U0001f600"
PRE = [  # what runs before the PRAGMA, on the empty database
    [],
    ["SELECT gpu_max(x), gpu_min(x) FROM (SELECT ? x UNION ALL SELECT ?)"],
    ["SELECT gpu_max_merge(s) FROM (SELECT gpu_max_state(x) s FROM (SELECT ? x UNION ALL "
     "SELECT ?))"],
    ["PRAGMA user_version = 1",  # page 1 written, the encoding still open
     "SELECT gpu_max(x), gpu_min(x) FROM (SELECT ? x UNION ALL SELECT ?)"],
    ["BEGIN", "CREATE TABLE z(a)", "SELECT gpu_max(x) FROM (SELECT ? x UNION ALL SELECT ?)",
     "ROLLBACK"],  # fixed by the CREATE even rolled back (SQLite)
    ["CREATE TEMP TABLE tt(a)",
     "SELECT gpu_max(x) FROM (SELECT ? x UNION ALL SELECT ?)"],
]
CHECKS = [
    "SELECT hex(gpu_max(x)), typeof(gpu_max(x)) FROM t",
    "SELECT hex(gpu_min(x)), typeof(gpu_min(x)) FROM t",
    "SELECT hex(gpu_max_merge(s)) FROM (SELECT gpu_max_state(x) s FROM t)",
    "SELECT hex(gpu_min_merge(s)) FROM (SELECT gpu_min_state(x) s FROM t)",
    "SELECT hex(gpu_max(x) OVER (ORDER BY rowid ROWS 1 PRECEDING)) FROM t LIMIT 1 OFFSET 1",
]


def reference(sql):
    return sql.replace("gpu_max_merge(s)", "max(s)").replace("gpu_min_merge(s)", "min(s)") \
        .replace("gpu_max_state(x)", "x").replace("gpu_min_state(x)", "x") \
        .replace("gpu_max", "max").replace("gpu_min", "min")


def section_encoding():
    for mem in (0, 1):
        for i, pre in enumerate(PRE):
            for enc in ("UTF-16le", "UTF-16be"):
                tag = "enc_%s_%s_%d" % ("mem" if mem else "file", enc[-2:], i)
                con = connect(":memory:" if mem else fresh("enc.db"))
                for sql in pre:
                    con.execute(sql, (A, B) if "?" in sql else ())
                con.execute("PRAGMA encoding = '%s'" % enc)
                now = one(con, "PRAGMA encoding")[0]
                con.execute("CREATE TABLE t(x)")
                con.executemany("INSERT INTO t VALUES (?)", [(A,), (B,)])
                for j, sql in enumerate(CHECKS):
                    got, want = one(con, sql), one(con, reference(sql))
                    rep.check("%s_%d" % (tag, j), got == want,
                              "%s (encoding %s): got %r want %r" % (sql, now, got, want))
                con.close()


# ------------------------------------------------------------ 2. UTF-16 group keys

# Two malformed sequences, a high surrogate then a non-surrogate, that
# SQLite's UTF-16 to UTF-8 conversion reads alike (U+D800 with the low 10
# bits of the next unit: U+10041 for both), and ordinary keys.
KEYS = {
    "le": ["00D84100", "00D84104", "6100", "4100", "61002000", "00D8", "3DD800DE", "41FF"],
    "be": ["D8000041", "D8000441", "0061", "0041", "00610020", "D800", "D83DDE00", "FF41"],
}
N_ROWS = 3000


def last_scan(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]


def utf16_table(enc):
    path = fresh("keys16%s.db" % enc)
    con = connect(path)
    con.text_factory = bytes  # the values as SQLite's UTF-8, malformed or not
    con.execute("PRAGMA encoding = 'UTF-16%s'" % enc)
    con.execute("CREATE TABLE t(k, x, kn TEXT COLLATE NOCASE, kr TEXT COLLATE RTRIM)")
    cases = " ".join("WHEN %d THEN CAST(X'%s' AS TEXT)" % (i, h)
                     for i, h in enumerate(KEYS[enc]))
    key = "CASE i %% %d %s END" % (len(KEYS[enc]), cases)
    con.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "
                "INSERT INTO t SELECT %s, i, %s, %s FROM s"
                % (N_ROWS - 1, key, key, key))
    # the two malformed keys: 2 groups of 1500 under BINARY (issue 22)
    con.execute("CREATE TABLE t2(k, x)")
    con.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "
                "INSERT INTO t2 SELECT CASE i %% 2 WHEN 0 THEN CAST(X'%s' AS TEXT) "
                "ELSE CAST(X'%s' AS TEXT) END, i FROM s" % (N_ROWS - 1, KEYS[enc][0], KEYS[enc][1]))
    return con


def group_rows(con, sql, params=()):
    return sorted(con.execute(sql, params).fetchall(), key=repr)


def section_utf16_keys():
    for enc in ("le", "be"):
        con = utf16_table(enc)
        con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
        for table, g, want_path in (("t2", "k", "parallel"), ("t", "k", "parallel"),
                                    ("t", "kn", "serial"), ("t", "kr", "serial"),
                                    ("t", "k COLLATE NOCASE", "serial"),
                                    ("t", "k COLLATE RTRIM", "serial")):
            ref = group_rows(con, "SELECT hex(g), typeof(g), g, n, c, s FROM (SELECT +(%s) g, "
                                  "count(*) n, count(x) c, sum(x) s FROM %s GROUP BY +(%s))"
                             % (g, table, g))
            for threads in (1, 2, 4):
                for mode in ("hash", "sorted"):
                    if mode == "sorted":
                        os.environ["GPUAGG_SCAN_GROUP_BY"] = "sql"
                    con.execute("SELECT gpuagg_config('threads', ?)", (threads,))
                    try:
                        got = group_rows(con, "SELECT hex(grp), typeof(grp), grp, rows, count, sum "
                                              "FROM gpu_aggregate(?, 'x', NULL, ?)", (table, g))
                    finally:
                        os.environ.pop("GPUAGG_SCAN_GROUP_BY", None)
                    ls = last_scan(con)
                    tag = "keys16%s_%s_%s_t%d_%s" % (enc, table, g.replace(" ", "_"), threads, mode)
                    rep.check(tag, got == ref, "got %r\nwant %r" % (got[:4], ref[:4]))
                    path = "serial" if threads == 1 else want_path
                    rep.check(tag + "_path", ls["path"] == path,
                              "path %r why %r, want %s" % (ls["path"], ls["why"], path))
            if table == "t2":
                rep.check("keys16%s_two_groups" % enc, [r[3] for r in ref] == [N_ROWS // 2] * 2,
                          repr(ref))
        con.close()


# ------------------------------------------------------------ main

def main():
    section_encoding()
    section_utf16_keys()
    rep.finish()


if __name__ == "__main__":
    main()
