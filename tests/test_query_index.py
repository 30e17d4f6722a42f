"""test_query_index.py — an indexed range (issue 37, part 5; planner/qindex.c,
planner/path.c rule 14): which path a filter that an index or the rowid
answers takes, as last_scan.path and .why (never by time), and the answer
equal to SQLite's on each of them.

Two tables of the same rows (N rows, 100 a day over N / 100 days): "so" in
date order (the dates grow with the rowid, as in a table filled day by day)
and "ss" shuffled (each row's day a hash of its number).  Each has an index
on d (TEXT), on k (INTEGER), on name (TEXT COLLATE NOCASE, the index NOCASE
too) and on code (TEXT, BINARY) under NOCASE: that index cannot answer a
comparison of code.  scan_min_rows = 1000, threads = 2: S (planner/
qindex.c rule 3) is N / 32.

Cases: a selective range (shuffled: its rows counted; ordered: a band under
scan_min_rows), a wide range (shuffled: the whole table; ordered: the
workers read only its rowid band), a rowid range and a rowid equality, an
equality on an INTEGER column, an empty range, filters no index answers (an
expression, a top-level OR, a COLLATE other than the index's, an index of
another collation), parameter-bound ranges (narrow and wide values of the
same text), a range written value op column, the band at threads 1, 2 and 4
with pieces of 7 rowids, the band's edges (its first and last rows hold the
largest values), gpu_aggregate's band, and a text with its own NOT INDEXED
(no SQLite plan to take: rule 14 still bands it).
"""

import json
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB  # noqa: E402

R = Reporter("query_index")
TMP = tempfile.mkdtemp(prefix="gpuagg_qindex_")
N = 20000
DAYS = N // 100


def day(i):
    return "2024-%02d-%02d" % (1 + i // 28, 1 + i % 28)  # 28-day months: ISO order


def connect(path):
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('threads', 2)")
    con.execute("SELECT gpuagg_config('scan_min_rows', 1000)")
    return con


db = connect(os.path.join(TMP, "t.db"))
db.execute("PRAGMA journal_mode = wal")
for name, shuffled in (("so", False), ("ss", True)):
    db.execute("CREATE TABLE %s(d TEXT, k INTEGER, name TEXT COLLATE NOCASE, code TEXT, v REAL)" % name)
    rows = []
    for i in range(N):
        j = (i * 7919) % N if shuffled else i
        # v: the rowid's own weight, so a band that loses its first or last
        # row changes every sum
        rows.append((day(j // 100), j % 997, "n%d" % (j % 50), "c%d" % (j % 400), (i + 1) * 1.5))
    db.execute("BEGIN")
    db.executemany("INSERT INTO %s VALUES (?,?,?,?,?)" % name, rows)
    db.execute("COMMIT")
    for col, extra in (("d", ""), ("k", ""), ("name", ""), ("code", " COLLATE NOCASE")):
        db.execute("CREATE INDEX %s_%s ON %s(%s%s)" % (name, col, name, col, extra))


def last():
    return json.loads(db.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]


def gq(text, args=(), threads=2):
    """gpu_query's rows, its last_scan, and the reference rows."""
    db.execute("SELECT gpuagg_config('threads', ?)", (threads,))
    db.execute("DROP TABLE IF EXISTS temp.q")
    db.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % "'%s'" % text.replace("'", "''"))
    got = db.execute("SELECT * FROM temp.q(%s)" % ", ".join("?" * len(args)), args).fetchall()
    ls = last()
    ref = db.execute(text.replace("sum(", "gpu_sum(").replace("total(", "gpu_total("), args).fetchall()
    db.execute("SELECT gpuagg_config('threads', 2)")
    return got, ls, ref


Q = "SELECT k %% 5 AS g, count(*), sum(v), total(v), min(d), max(d) FROM %s WHERE %s GROUP BY g ORDER BY g"
Q1 = "SELECT count(*), sum(v), min(rowid), max(rowid) FROM %s WHERE %s"


def case(label, table, where, path, why_has=(), why_not=(), args=(), q=Q, threads=2):
    got, ls, ref = gq(q % (table, where), args, threads)
    why = ls.get("why", "")
    ok = (got == ref and ls.get("path") == path and all(w in why for w in why_has) and
          not any(w in why for w in why_not))
    R.check(label, ok, "path %r why %r\n  got %r\n  ref %r" % (ls.get("path"), why, got[:3], ref[:3]))
    return ls


D = lambda i: "'%s'" % day(i)  # noqa: E731
OWN = "SQLite's own plan"

# a selective range: shuffled, its rows counted (200 <= S = 625), SQLite's own plan
case("selective shuffled", "ss", "d BETWEEN %s AND %s" % (D(5), D(6)), "serial",
     ("an indexed range of 200 rows", "through ss_d", OWN))
# ordered: its band (100 rowids) is under scan_min_rows: no count needed
case("selective ordered", "so", "d = %s" % D(7), "serial",
     ("an indexed range within rowids 701..800", "through so_d", OWN))
# ordered, a band of 300 rowids: over scan_min_rows / 8, so the workers
# read it (fewer rows than scan_min_rows: the band, not the count, decides)
case("narrow band ordered", "so", "d BETWEEN %s AND %s" % (D(10), D(12)), "parallel",
     ("an indexed range through so_d within rowids 1001..1300",))
# wide: shuffled, more than S rows: the whole table
case("wide shuffled", "ss", "d >= %s" % D(20), "parallel",
     ("an indexed range of over 625 rows through ss_d, scattered: the whole table",))
# wide, ordered: the workers read only the band
ls = case("wide ordered band", "so", "d BETWEEN %s AND %s" % (D(50), D(120)), "parallel",
          ("an indexed range through so_d within rowids 5001..12100",))
R.check("wide ordered band rows", ls.get("rows") == 7100, ls)
# a band at most a quarter in the range: lookups beat reading it... only
# while the rows are few (S); here they are not, so still the band
case("ordered range and other terms", "so", "d > %s AND d <= %s AND v > 0 AND k %% 2 = 0" % (D(10), D(30)),
     "parallel", ("within rowids 1101..3100",))

# the rowid: two seeks give the band
ls = case("rowid range", "ss", "rowid BETWEEN 3000 AND 9000", "parallel",
          ("an indexed range through the rowid within rowids 3000..9000",), q=Q1)
R.check("rowid range rows", ls.get("rows") == 6001, ls)
case("rowid range, oid, value op column", "ss", "3000 <= oid AND _rowid_ < 9001", "parallel",
     ("within rowids 3000..9000",), q=Q1)
case("rowid equality", "ss", "rowid = 77", "serial", ("an indexed range within rowids 77..77", OWN), q=Q1)

# an INTEGER PRIMARY KEY is the rowid; INTEGER PRIMARY KEY DESC is not
# (its own index, whose 8,901 keys are too many for a band)
for name, decl in (("ia", "INTEGER PRIMARY KEY"), ("ib", "INTEGER PRIMARY KEY DESC")):
    db.execute("CREATE TABLE %s(id %s, v)" % (name, decl))
    db.execute("BEGIN")
    db.executemany("INSERT INTO %s(id, v) VALUES (?, ?)" % name, [(i, i * 2) for i in range(1, N + 1)])
    db.execute("COMMIT")
case("INTEGER PRIMARY KEY range", "ia", "id BETWEEN 100 AND 9000", "parallel",
     ("an indexed range through the rowid within rowids 100..9000",), q=Q1)
case("INTEGER PRIMARY KEY DESC range", "ib", "id BETWEEN 100 AND 9000", "parallel",
     ("through sqlite_autoindex_ib_1, no band (too many keys): the whole table",), q=Q1)
# an equality on an INTEGER column: 20 rows of each k
case("equality k", "ss", "k = 3", "serial", ("an indexed range of 21 rows", "through ss_k", OWN))
case("equality k as text", "ss", "k = '3'", "serial", ("an indexed range of 21 rows", OWN))
case("equality, NOCASE column and index", "ss", "name = 'N7'", "serial", ("an indexed range of 400 rows",
                                                                          "through ss_name", OWN))
# an empty range
case("empty range", "ss", "d = 'none'", "serial", ("an indexed range of 0 rows", OWN))

# filters no index answers: the whole table, and no word of an index
NOIDX = ("indexed range",)
case("expression", "ss", "d || '' = %s" % D(5), "parallel", (), NOIDX)
case("substr", "ss", "substr(d, 1, 7) = '2024-01'", "parallel", (), NOIDX)
case("top-level OR", "ss", "d = %s OR d = %s" % (D(5), D(6)), "parallel", (), NOIDX)
case("OR beside the range", "ss", "d = %s AND k = 3 OR k = 4" % D(5), "parallel", (), NOIDX)
case("CASE holding AND", "ss", "CASE WHEN k = 1 AND d = %s THEN 1 ELSE 0 END" % D(5), "parallel", (), NOIDX)
case("NOT of a range", "ss", "NOT d = %s" % D(5), "parallel", (), NOIDX)
# collations: a BINARY comparison of the NOCASE column (its index is NOCASE)
case("collation: COLLATE BINARY on a NOCASE column", "ss", "name = 'n7' COLLATE BINARY", "parallel", (), NOIDX)
# code is BINARY, its only index NOCASE: that index cannot answer code = 'c7'
case("collation: an index of another collation", "ss", "code = 'c7'", "parallel", (), NOIDX)
case("collation: index of another collation, range", "ss", "code BETWEEN 'c7' AND 'c8'", "parallel", (), NOIDX)

# parameters: the same text, narrow and wide values
case("parameters narrow", "ss", "d BETWEEN ?1 AND ?2", "serial", ("an indexed range of 200 rows", OWN),
     args=(day(5), day(6)))
case("parameters wide", "ss", "d BETWEEN ?1 AND ?2", "parallel", ("scattered: the whole table",),
     args=(day(5), day(150)))
case("parameters, ordered band", "so", "d >= :lo AND d < :hi AND k >= ?3", "parallel",
     ("within rowids 2001..14000",), args=(day(20), day(140), 0))
case("value op column", "ss", "%s <= d AND %s >= d" % (D(5), D(6)), "serial", ("an indexed range of 200 rows",))

# the band at every thread count, tiny pieces: answers equal SQLite's, and
# the band's first and last rows count (v grows with the rowid)
os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "7"
for th in (1, 2, 4):
    # (threads = 1: grouped, one worker's plan; ungrouped would be serial)
    q1 = Q1 + (" GROUP BY k %% 3 ORDER BY 1" if th == 1 else "")
    case("band threads %d pieces 7" % th, "so", "d BETWEEN %s AND %s" % (D(31), D(77)), "parallel",
         ("within rowids 3101..7800",), q=q1, threads=th)
    case("rowid band threads %d pieces 7" % th, "ss", "rowid >= 1234 AND rowid <= 5678", "parallel",
         ("within rowids 1234..5678",), q=q1, threads=th)
del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
got, ls, ref = gq(Q1 % ("so", "d BETWEEN %s AND %s" % (D(31), D(77))))
R.check("band edges", got == ref == [(4700, sum((i + 1) * 1.5 for i in range(3100, 7800)), 3101, 7800)],
        (got, ref))

# the text's own NOT INDEXED: no SQLite plan to take, the band still serves
case("NOT INDEXED text, wide", "so", "d BETWEEN %s AND %s" % (D(50), D(120)), "parallel",
     ("within rowids 5001..12100",), q=Q.replace("FROM %s", "FROM %s NOT INDEXED"))
case("NOT INDEXED text, selective", "ss", "d BETWEEN %s AND %s" % (D(5), D(6)), "parallel", (),
     q=Q.replace("FROM %s", "FROM %s NOT INDEXED"))

# gpu_aggregate: its serial text is NOT INDEXED, so no SQLite plan; a band
got = db.execute("SELECT grp, count, sum FROM gpu_aggregate('so', 'v', 'd BETWEEN ''%s'' AND ''%s''', 'k %% 3') "
                 "ORDER BY grp" % (day(50), day(120))).fetchall()
ls = last()
ref = db.execute("SELECT k %% 3, count(v), gpu_sum(v) FROM so WHERE d BETWEEN '%s' AND '%s' GROUP BY 1 ORDER BY 1"
                 % (day(50), day(120))).fetchall()
R.check("gpu_aggregate band", got == ref and ls.get("path") == "parallel" and
        "within rowids 5001..12100" in ls.get("why", ""), (ls, got, ref))
got = db.execute("SELECT count, sum FROM gpu_aggregate('ss', 'v', 'd BETWEEN ''%s'' AND ''%s''')"
                 % (day(5), day(6))).fetchall()
ls = last()
ref = db.execute("SELECT count(v), gpu_sum(v) FROM ss WHERE d BETWEEN '%s' AND '%s'" % (day(5), day(6))).fetchall()
R.check("gpu_aggregate selective: no SQLite plan to take", got == ref and ls.get("path") == "parallel" and
        OWN not in ls.get("why", ""), (ls, got, ref))

# issue 37 (review): a subquery's value is known only in the scan's
# snapshot: its term is no range term (counted with it unbound, as NULL,
# every range looked empty); the other terms still give the band
db.execute("CREATE TABLE IF NOT EXISTS qb(x TEXT)")
db.execute("DELETE FROM qb")
db.execute("INSERT INTO qb VALUES (?)", (day(10),))
case("a subquery's term is no range term", "so", "d > (SELECT max(x) FROM qb) AND d <= %s" % D(12), "parallel",
     ("an indexed range through so_d within rowids 1..1300",), ("empty",))

# a table below scan_min_rows: rule 8 as before, no count
db.execute("SELECT gpuagg_config('scan_min_rows', 100000)")
case("small table: rule 8", "ss", "d BETWEEN %s AND %s" % (D(5), D(6)), "serial", ("fewer than scan_min_rows",),
     NOIDX)
db.execute("SELECT gpuagg_config('scan_min_rows', 1000)")

R.finish()
