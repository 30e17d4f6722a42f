"""test_query_join.py — gpu_query's star and snowflake joins (issue 38,
step 1: planner/qjoin.c; docs/gpu_query.md, "Joins").

The contract: for a text T that joins a fact table to its dimensions,

    CREATE VIRTUAL TABLE temp.q USING gpu_query('T');  SELECT * FROM q;

returns the rows of T run by SQLite with sum, total, avg, min and max
spelled gpu_sum ... gpu_max: values and typeof, REALs bit for bit, on one
committed state, with SQLite's join semantics (affinity, collation as the
operands are written, NULL keys, duplicate keys, LEFT JOIN).

What runs (all from SEED):

  * a differential join generator (join_queries): WORLDS database files
    (WAL and rollback journal), each a random star or snowflake schema of
    1 to 4 dimensions d1..d4 around a fact table f of 0 to 3,000 rows; a
    dimension's key is dense (INTEGER PRIMARY KEY), sparse, duplicated,
    NULL, TEXT COLLATE NOCASE ('a' and 'A'), TEXT numbers against an
    INTEGER, untyped or TEXT fact key ('5', '05', ' 7'), REAL against
    INTEGER (1.0 and 1), or composite (two columns); a dimension joins the
    fact or (a snowflake) another dimension.  QUERIES texts (2,000 by
    default, issue 38's floor for make test) over them: comma joins with the conditions in WHERE, JOIN ...
    ON, JOIN ... USING, LEFT JOIN, the tables written in any order (a
    fact not written first with LEFT JOIN or USING takes the serial path,
    documented), the equality's operands either way round; filters on
    every table, in WHERE and in ON; GROUP BY dimension attributes, fact
    columns and expressions over two tables; count, sum, total, avg, min,
    max, DISTINCT and FILTER; HAVING (with IS NULL / NOTNULL, typeof and
    an overflow on dimension group terms, which SQLite folds or moves into
    WHERE); a dimension column w beside a table w; bare rowid names where
    the other table is WITHOUT ROWID; ORDER BY every term with LIMIT.
    Each is compared with the reference on the serial path (inside an
    explicit transaction), at threads 1, 2 and 4 (tiny rowid pieces for
    some), and (PARTS, a third of the queries) through gpu_query_partial
    over 1 to 3 shard files of the fact, each with the dimensions, merged
    and finished on a database that declares the tables.  At 2 threads
    each parallel run's last_scan.join.probe is counted (planner/qdims.c):
    the probe path taken, or the reason each worker ran SQLite's join
    (duplicate keys after affinity and collation, by design in the worlds'
    first dimension, most often); at least a quarter take it.
  * fixed cases: each refused construct with its exact message; the
    collation and affinity rules of issue 38 section 2, each a case; the
    fact table's choice (sqlite_stat1, the rowid span, ties, the
    gpuagg_fact hint); the serial path's reasons; the cache declining;
    last_scan.join (the plan: the fact's rowid range first, dimensions by
    key); SSB at SF 0.01 (bench/ssb.py) on every path; a writer process
    that changes a dimension and the fact table while queries run (every
    answer one committed state); the review's cases (review_cases) on
    every path.

Environment: SEED (default 20261206), QUERIES (default 2000), WORLDS
(default 12), VERBOSE=1, SSB=0 (skip SSB).
"""

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import typed_key, Reporter, LIB, GPU  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = int(os.environ.get("SEED", "20261206"))
QUERIES = int(os.environ.get("QUERIES", "2000"))
WORLDS = int(os.environ.get("WORLDS", "12"))
TMP = tempfile.mkdtemp(prefix="gpuagg_join_")
FACT_NOT_FIRST = "the join has LEFT JOIN or USING"  # qjoin.c rule 7: serial, documented


# a statement that runs past this many seconds is interrupted (a broken
# join order is a cross product: the suite fails instead of hanging)
STATEMENT_S = float(os.environ.get("STATEMENT_S", "120"))
DEADLINE = [0.0]


def arm():
    DEADLINE[0] = time.time() + STATEMENT_S


def connect(path, ro=False):
    con = sqlite3.connect("file:%s?mode=ro" % path if ro else path, uri=ro, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.set_progress_handler(lambda: int(DEADLINE[0] and time.time() > DEADLINE[0]), 100000)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    return con


def last_scan(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}


def sql_lit(s):
    return "'" + s.replace("'", "''") + "'"


def gpu_text(q):
    """The reference: the text with gpu_ names (count unchanged)."""
    return re.sub(r"\b(sum|total|avg|min|max)\s*\(", lambda m: "gpu_%s(" % m.group(1).lower(), q,
                  flags=re.I)


def run(con, sql, params=()):
    arm()
    try:
        return ("ok", con.execute(sql, params).fetchall())
    except sqlite3.Error as e:
        return ("error", str(e))


def via_gpu_query(con, text, params=()):
    arm()
    try:
        con.execute("DROP TABLE IF EXISTS temp.q")
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % sql_lit(text))
        return ("ok", con.execute("SELECT * FROM temp.q(%s)" % ",".join("?" * len(params)),
                                  params).fetchall())
    except sqlite3.Error as e:
        return ("error", str(e))


def same(got, want, ordered):
    if got[0] != want[0]:
        return False
    if got[0] == "error":
        return True
    if ordered:
        return repr(got[1]) == repr(want[1])
    key = lambda rows: sorted(tuple(typed_key(v) for v in r) for r in rows)  # noqa: E731
    return key(got[1]) == key(want[1])


def show(r):
    if r[0] == "error":
        return "error: " + r[1]
    return "%d rows %s" % (len(r[1]), repr(r[1][:6])[:400])


# ---------------------------------------------------------------- worlds

KINDS = ("dense", "sparse", "dup", "null", "nocase", "textnum", "real", "comp")


class Dim:
    def __init__(self, i, kind, parent):
        self.i, self.kind, self.parent = i, kind, parent  # parent: 0 the fact, else a dim number
        self.name = "d%d" % i
        self.key = "k%d" % i
        self.cols = [self.key] + (["k%db" % i] if kind == "comp" else [])


def key_values(r, d, n):
    """The dimension's key values (n rows) and what a referencing row
    holds: (rows' keys, pool of referencing values)."""
    k = d.kind
    if k == "dense":
        keys = list(range(1, n + 1))
        return keys, keys + [n + 5, None]
    if k == "sparse":
        keys = r.sample(range(-50, 400), n)
        return keys, keys + [1000, None]
    if k == "dup":
        keys = [r.randint(1, max(1, n // 2)) for _ in range(n)]
        return keys, list(set(keys)) + [None, 999]
    if k == "null":
        keys = [r.choice([None, r.randint(1, 20)]) for _ in range(n)]
        return keys, list(range(1, 21)) + [None]
    if k == "nocase":
        pool = ["a", "A", "b", "B", "c", "a ", "Ab", "ab", "d"]
        keys = [r.choice(pool) for _ in range(n)]
        return keys, pool + [None]
    if k == "textnum":
        pool = ["5", "05", "7", " 7", "7.0", "x", "12", "5e0"]
        keys = [r.choice(pool) for _ in range(n)]
        return keys, [5, 7, 12, "5", "05", 7.0, None, "x"]
    if k == "real":
        pool = [1.0, 2.0, 2.5, 3, 4.0, -0.0, 0]
        keys = [r.choice(pool) for _ in range(n)]
        return keys, [1, 2, 2.5, 3.0, 4, 0, None]
    if k == "comp":
        keys = [(r.randint(1, 6), r.randint(1, 3)) for _ in range(n)]
        keys = list(dict.fromkeys(keys)) if r.random() < 0.5 else keys
        return keys, keys + [(9, 9), (None, 1)]
    raise ValueError(k)


def key_decl(d, r):
    k = d.kind
    if k == "dense":
        return "%s INTEGER PRIMARY KEY" % d.key
    if k == "nocase":
        return "%s TEXT COLLATE NOCASE" % d.key
    if k == "textnum":
        return "%s TEXT" % d.key
    if k == "real":
        return "%s REAL" % d.key
    if k == "comp":
        return "%s INTEGER, %sb INTEGER" % (d.key, d.key)
    return "%s INTEGER" % d.key


def ref_decl(d, r):
    """A referencing column's declaration (the fact's, or a parent dim's)."""
    k = d.kind
    if k == "nocase":
        return "%s %s" % (d.key, r.choice(["TEXT", "TEXT COLLATE NOCASE", ""]))
    if k == "textnum":
        return "%s %s" % (d.key, r.choice(["INTEGER", "", "TEXT", "REAL"]))
    if k == "real":
        return "%s %s" % (d.key, r.choice(["INTEGER", "REAL", ""]))
    if k == "comp":
        return "%s INTEGER, %sb INTEGER" % (d.key, d.key)
    return "%s INTEGER" % d.key


class World:
    def __init__(self, w, r):
        self.w = w
        self.path = os.path.join(TMP, "w%d.db" % w)
        self.mode = "wal" if w % 2 == 0 else "delete"
        nd = r.randint(1, 4)
        self.dims = []
        for i in range(1, nd + 1):
            parent = 0 if i == 1 or r.random() < 0.65 else r.randint(1, i - 1)
            self.dims.append(Dim(i, r.choice(KINDS), parent))
        self.nf = r.choice([0, 1, 5, 40, 200, 700, 1500, 3000])
        self.fact_ipk = r.random() < 0.4
        # issue 38's review (joinfix): columns and a table drawn from their
        # own stream, so the worlds above stay as they were
        self.xr = random.Random(SEED * 131 + w)
        self.build(r)

    def children(self, p):
        return [d for d in self.dims if d.parent == p]

    def build(self, r):
        con = sqlite3.connect(self.path, isolation_level=None)
        con.execute("PRAGMA journal_mode=%s" % self.mode)
        ddl = []
        pools = {}
        drows = {}
        for d in self.dims:
            n = r.randint(1, 30)
            keys, pool = key_values(r, d, n)
            pools[d.i] = pool
            drows[d.i] = keys
        for d in self.dims:
            cols = [key_decl(d, r), "g%d TEXT" % d.i, "h%d INTEGER" % d.i, "v%d REAL" % d.i]
            cols += [ref_decl(c, r) for c in self.children(d.i)]
            # u: 1 and 1.0 in one group (typeof, overflow in HAVING); n: NOT
            # NULL (IS NULL folds, but not under LEFT JOIN); w: the name of
            # a table (planner/path.c rule 5 reads d.w as a column)
            cols += ["u%d" % d.i, "n%d INTEGER NOT NULL" % d.i, "w REAL"]
            ddl.append("CREATE TABLE %s(%s)" % (d.name, ", ".join(cols)))
            if d.kind in ("sparse", "dup", "nocase", "comp") and r.random() < 0.6:
                ddl.append("CREATE INDEX %s_k ON %s(%s)" % (d.name, d.name, ", ".join(d.cols)))
        fcols = (["id INTEGER PRIMARY KEY"] if self.fact_ipk else []) + ["a INTEGER", "x REAL", "y"]
        fcols += [ref_decl(d, r) for d in self.children(0)]
        fcols += ["wk TEXT"]
        ddl.append("CREATE TABLE f(%s)" % ", ".join(fcols))
        # a WITHOUT ROWID dimension: a bare rowid is then the fact's
        ddl.append("CREATE TABLE w(wk TEXT PRIMARY KEY, wq INTEGER, wv) WITHOUT ROWID")
        self.ddl = ddl
        con.execute("BEGIN")
        for s in ddl:
            con.execute(s)

        def ref_vals(c):
            v = r.choice(pools[c.i])
            return list(v) if c.kind == "comp" else [v]
        for d in self.dims:
            for j, k in enumerate(drows[d.i]):
                row = list(k) if d.kind == "comp" else [k]
                row += [r.choice(["p", "q", "r", "P", None]), r.choice([0, 1, 2, 3, None]),
                        r.choice([0.5, 1.25, -3.0, 1e10, 0.1, None])]
                for c in self.children(d.i):
                    row += ref_vals(c)
                xr = self.xr
                row += [xr.choice([1, 1.0, 2, 2.0, 3, None, 9223372036854775807, 0.5]), xr.randint(0, 3),
                        xr.choice([0.25, -1.5, 4.0, None])]
                con.execute("INSERT INTO %s VALUES(%s)" % (d.name, ",".join("?" * len(row))), row)
        for j in range(self.nf):
            row = ([j * 3 + 7] if self.fact_ipk else []) + [
                r.randint(-5, 20), r.choice([0.1, 0.2, 1e-3, 2.5, -7.75, 1e15, 3.0, None]),
                r.choice([1, 2.0, 1.0, 3, None, 0.5, 7])]
            for c in self.children(0):
                row += ref_vals(c)
            row += [self.xr.choice(["x0", "x1", "x2", "x3", "x9", None])]
            con.execute("INSERT INTO f VALUES(%s)" % ",".join("?" * len(row)), row)
        for k in range(4):
            con.execute("INSERT INTO w VALUES(?, ?, ?)", ("x%d" % k, k, self.xr.choice([1, 1.0, 2, None])))
        con.execute("COMMIT")
        if r.random() < 0.3:
            con.execute("ANALYZE")
        con.close()
        self.con = connect(self.path)

    def shards(self, r):
        """The fact cut at random rowids into 1-3 files, each with every
        dimension (a file's partial is the join within that file)."""
        if hasattr(self, "_shards"):
            return self._shards
        rows = [x[0] for x in self.con.execute("SELECT rowid FROM f ORDER BY rowid")]
        k = r.randint(1, 3)
        cuts = sorted(r.sample(rows[1:], min(k - 1, max(0, len(rows) - 1)))) if rows else []
        bounds = [None] + cuts + [None]
        out = []
        for j in range(len(bounds) - 1):
            path = os.path.join(TMP, "w%d_s%d.db" % (self.w, j))
            c = sqlite3.connect(path, isolation_level=None)
            for s in self.ddl:
                c.execute(s)
            c.execute("ATTACH ? AS src", (self.path,))
            for name in [d.name for d in self.dims] + ["w"]:
                c.execute("INSERT INTO main.%s SELECT * FROM src.%s" % (name, name))
            lo = "rowid >= %d" % bounds[j] if bounds[j] is not None else "1"
            hi = "rowid < %d" % bounds[j + 1] if bounds[j + 1] is not None else "1"
            c.execute("INSERT INTO main.f(rowid, %s) SELECT rowid, * FROM src.f WHERE %s AND %s"
                      % (self.fact_cols(), lo, hi))
            c.execute("DETACH src")
            c.close()
            out.append(connect(path, ro=True))
        self._shards = out
        return out

    def fact_cols(self):
        return ", ".join(x[1] for x in self.con.execute("PRAGMA table_info(f)"))


# ---------------------------------------------------------------- queries

class JoinQuery:
    def __init__(self, r, world, hint=False, tag=None):
        self.r, self.wd, self.force_hint = r, world, hint
        self.tag = tag  # partial_dims_queries' reference: every join also on tag
        self.form = r.choice(["comma", "on", "on", "using", "mixed"])
        self.left = set()
        if self.form in ("on", "using", "mixed") and r.random() < 0.35:
            self.left = {d.i for d in world.dims if r.random() < 0.5}
        self.params = []
        self.xr = random.Random(r.random())  # joinfix's draws (after the older ones)
        self.build()

    def q(self, t, c):
        """A column, qualified or (where unique) not."""
        if c in ("a", "x", "y") or re.match(r"[ghv]\d", c):
            if self.r.random() < 0.3:
                return c
        return "%s.%s" % (t, c)

    def cond(self, d):
        """d's join condition to its parent."""
        p = "f" if d.parent == 0 else "d%d" % d.parent
        parts = []
        for c in d.cols:
            a, b = "%s.%s" % (p, c), "%s.%s" % (d.name, c)
            parts.append("%s = %s" % ((a, b) if self.r.random() < 0.5 else (b, a)))
        if self.tag:  # no draw: the text is the same but for the tag
            parts.append("%s.%s = %s.%s" % (p, self.tag, d.name, self.tag))
        return " AND ".join(parts)

    def atom(self):
        r, wd = self.r, self.wd
        if r.random() < 0.35 or not wd.dims:
            return r.choice(["%s > %d" % (self.q("f", "a"), r.randint(-3, 15)),
                             "%s < %r" % (self.q("f", "x"), r.choice([1.0, 3.0, 1e12])),
                             "%s IS NOT NULL" % self.q("f", "y"),
                             "%s BETWEEN %d AND %d" % (self.q("f", "a"), r.randint(-5, 5), r.randint(5, 20))])
        d = r.choice(wd.dims)
        t = d.name
        return r.choice(["%s <> %d" % (self.q(t, "h%d" % d.i), r.randint(0, 3)),
                         "%s IN ('p', 'q')" % self.q(t, "g%d" % d.i),
                         "%s IS NULL" % self.q(t, "h%d" % d.i),
                         "(%s > 0 OR %s IS NULL)" % (self.q(t, "v%d" % d.i), self.q(t, "g%d" % d.i)),
                         "coalesce(%s, 1) < 3" % self.q(t, "h%d" % d.i)])

    def order_tables(self):
        """The tables as written: fact first mostly; parents before
        children where the order matters (LEFT, USING)."""
        r, wd = self.r, self.wd
        bfs, todo = [], [0]
        while todo:
            p = todo.pop(0)
            for c in wd.children(p):
                bfs.append(c)
                todo.append(c.i)
        if self.form == "comma" or (self.form == "on" and not self.left):
            r.shuffle(bfs)
            order = ["f"] + [d.name for d in bfs]
            if r.random() < 0.25:
                r.shuffle(order)
            return order
        order = ["f"] + [d.name for d in bfs]
        if r.random() < 0.1:  # the fact not first: serial, documented
            order.insert(1, order.pop(0))
        return order

    def from_clause(self, where):
        r, wd = self.r, self.wd
        order = self.order_tables()
        self.fact_first = order[0] == "f"
        dims = {d.name: d for d in wd.dims}
        out = []
        placed = []
        for pos, t in enumerate(order):
            alias = ""
            if pos == 0:
                out.append(t + alias)
                placed.append(t)
                continue
            d = dims.get(t)
            # the condition joining t to the tables before it (either side)
            edge = None
            if d is not None and ((d.parent == 0 and "f" in placed) or ("d%d" % d.parent) in placed):
                edge = d
            else:  # t is f or a parent written after its child
                kids = [dims[x] for x in placed if x in dims and
                        ((dims[x].parent == 0 and t == "f") or "d%d" % dims[x].parent == t)]
                edge = kids[0] if kids else None
            extra = [x for x in placed if x in dims and x != (edge.name if edge else None) and
                     ((dims[x].parent == 0 and t == "f") or "d%d" % dims[x].parent == t)]
            style = self.form if self.form != "mixed" else r.choice(["comma", "on", "using"])
            if edge is None or extra or (style == "using" and edge.parent == 0 and t == "f"):
                style = "comma" if not self.left else "on"
            lj = d is not None and d.i in self.left and edge is d
            if style == "comma" and not lj:
                out.append(", " + t)
                if edge is not None:
                    where.append(self.cond(edge))
            elif style == "using" and edge is d:
                out.append(" %sJOIN %s USING (%s)" % ("LEFT " if lj else r.choice(["", "INNER "]), t,
                                                       ", ".join(d.cols + ([self.tag] if self.tag else []))))
            else:
                on = self.cond(edge) if edge is not None else "1"
                if lj and r.random() < 0.4:
                    on += " AND " + self.atom_on(d)
                out.append(" %sJOIN %s ON %s" % ("LEFT " if lj else r.choice(["", "INNER ", "CROSS "]), t, on))
            for x in extra:
                where.append(self.cond(dims[x]))
            placed.append(t)
        return "".join(out)

    def atom_on(self, d):
        return "%s.h%d <> %d" % (d.name, d.i, self.r.randint(0, 3))

    def build(self):
        r, wd = self.r, self.wd
        where = []
        frm = self.from_clause(where)
        for _ in range(r.choice([0, 0, 1, 2, 3])):
            where.append(self.atom())
        terms = []
        for _ in range(r.choice([0, 1, 1, 2, 2, 3])):
            if wd.dims and r.random() < 0.75:
                d = r.choice(wd.dims)
                terms.append(r.choice([self.q(d.name, "g%d" % d.i), self.q(d.name, "h%d" % d.i),
                                       "%s + %s %% 2" % (self.q(d.name, "h%d" % d.i), self.q("f", "a"))]))
            else:
                terms.append(r.choice([self.q("f", "a") + " % 3", self.q("f", "a")]))
        terms = list(dict.fromkeys(terms))
        aggs = []
        for _ in range(r.randint(1, 4)):
            aggs.append(self.agg())
        having = self.review_having(terms, aggs)
        items = terms + aggs
        # the fact is the table of most rows (qjoin.c rule 2); a small f
        # is named by the hint
        hint = "/* gpuagg_fact(f) */ " if self.force_hint or wd.nf < 60 or r.random() < 0.3 else ""
        sql = "SELECT %s%s FROM %s" % (hint, ", ".join(items), frm)
        if where:
            sql += " WHERE " + " AND ".join(where)
        if terms:
            sql += " GROUP BY " + ", ".join(terms)
            if r.random() < 0.25:
                having.append("count(*) > %d" % r.randint(0, 3))
            if having:
                sql += " HAVING " + " AND ".join(having)
        self.ordered = bool(terms) and r.random() < 0.5
        if self.ordered:
            sql += " ORDER BY " + ", ".join("%d%s" % (k + 1, r.choice(["", " DESC"])) for k in range(len(terms)))
            if r.random() < 0.5:
                sql += " LIMIT %d" % r.randint(1, 5)
        self.text = sql
        if self.xr.random() < 0.08:
            self.rowid_text(hint)

    def review_having(self, terms, aggs):
        """Issue 38's review (joinfix): HAVING terms on dimension group
        terms (IS NULL / NOTNULL, typeof over 1 and 1.0, an overflow),
        which SQLite folds or moves into WHERE; a dimension's column w,
        the name of a table."""
        xr, wd = self.xr, self.wd
        out = []
        if not wd.dims:
            return out
        if xr.random() < 0.15:
            d = xr.choice(wd.dims)
            aggs.append(xr.choice(["sum(%s.w)", "max(%s.w)", "count(%s.w)"]) % d.name)
        if xr.random() < 0.4:
            d = xr.choice(wd.dims)
            c = xr.choice("ughn")
            t = "%s.%s%d" % (d.name, c, d.i)
            if t not in terms:
                terms.append(t)
            # u's groups hold 1 and 1.0, whose representative SQLite's
            # plan picks: only conditions that, moved, keep one type
            out.append(xr.choice(["typeof(%s) = 'integer'", "typeof(%s) = 'real'",
                                  "%s * 9223372036854775807 = 9223372036854775807"] +
                                 ([] if c == "u" else ["%s IS NULL", "%s IS NOT NULL", "%s ISNULL",
                                                       "%s NOTNULL", "(%s ISNULL OR %s + 0 > 1)"])
                                 ).replace("%s", t))
            if xr.random() < 0.3:
                out.append("%s NOTNULL" % t)
        return out

    def rowid_text(self, hint):
        """A bare rowid name where the other table is WITHOUT ROWID: the
        fact's rowid (SQLite's lookupName)."""
        xr = self.xr
        name = xr.choice(["rowid", "oid", "_rowid_", "ROWID"])
        term = xr.choice(["%s %% 3", "%s / 50", "%s %% 2 + w.wq"]) % name
        join = xr.choice(["JOIN w ON f.wk = w.wk", "JOIN w ON w.wk = f.wk", ", w", "LEFT JOIN w ON f.wk = w.wk",
                          "JOIN w USING (wk)"])
        where = " WHERE f.wk = w.wk" if join == ", w" else ""
        aggs = xr.choice(["count(*)", "sum(%s)" % name, "max(%s), min(w.wv)" % name, "total(f.x), count(*)"])
        self.text = "SELECT %s%s AS p, %s FROM f %s%s GROUP BY p" % (hint, term, aggs, join, where)
        if xr.random() < 0.3:
            self.text += " HAVING max(%s) > %d" % (name, xr.randint(0, 100))
        self.ordered = xr.random() < 0.5
        if self.ordered:
            self.text += " ORDER BY p DESC LIMIT 3"
        self.fact_first = True

    def agg(self):
        r, wd = self.r, self.wd
        d = r.choice(wd.dims) if wd.dims else None
        opts = ["count(*)", "sum(%s)" % self.q("f", "x"), "avg(%s)" % self.q("f", "y"),
                "min(%s)" % self.q("f", "a"), "total(%s)" % self.q("f", "x")]
        if d:
            opts += ["max(%s)" % self.q(d.name, "g%d" % d.i), "count(%s)" % self.q(d.name, "h%d" % d.i),
                     "sum(%s * %s)" % (self.q("f", "a"), self.q(d.name, "h%d" % d.i)),
                     "total(%s)" % self.q(d.name, "v%d" % d.i),
                     "sum(DISTINCT %s)" % self.q(d.name, "h%d" % d.i),
                     "count(*) FILTER (WHERE %s > 1)" % self.q(d.name, "h%d" % d.i),
                     "min(%s)" % self.q(d.name, "v%d" % d.i)]
        return r.choice(opts)


def partial_answer(world, r, text):
    """text over the world's shards: partials merged, finished on an
    in-memory database declaring every table."""
    parts = []
    for sh in world.shards(r):
        sh.execute("SELECT gpuagg_config('threads', ?)", (r.choice((1, 2, 4)),))
        try:
            parts.append(sh.execute("SELECT gpu_query_partial(?)", (text,)).fetchone()[0])
        except sqlite3.Error as e:
            return ("error", str(e))
    m = sqlite3.connect(":memory:", isolation_level=None)
    m.enable_load_extension(True)
    m.load_extension(LIB)
    try:
        blob = m.execute("SELECT gpu_query_merge(%s)" % ",".join("?" * len(parts)), parts).fetchone()[0]
        for s in world.ddl:
            m.execute(s)
        m.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % sql_lit(text))
        got = ("ok", m.execute("SELECT * FROM temp.q WHERE gpuagg_partial = ?", (blob,)).fetchall())
        if last_scan(m).get("path") != "partial":
            got = ("error", "finished on path %r" % last_scan(m).get("path"))
        return got
    except sqlite3.Error as e:
        return ("error", str(e))
    finally:
        m.close()


def join_queries(rep):
    r = random.Random(SEED)
    t0 = time.time()
    worlds = [World(w, r) for w in range(WORLDS)]
    stats = Counter()
    fails = 0
    for qi in range(QUERIES):
        wd = worlds[qi % len(worlds)]
        qr = random.Random(SEED * 7919 + qi)
        q = JoinQuery(qr, wd, hint=qi % 3 == 0)  # a partial's text names its fact
        con = wd.con
        want = run(con, gpu_text(q.text))
        if want[0] != "ok":
            stats["ref_error"] += 1
            rep.check("join_q%d" % qi, False, "the reference fails: %s\n  %s" % (want[1], q.text))
            fails += 1
            continue
        problems = []
        # the serial path: inside an explicit transaction (planner/path.c rule 4)
        con.execute("BEGIN")
        got = via_gpu_query(con, q.text)
        ls = last_scan(con)
        con.execute("COMMIT")
        if got[0] == "ok" and ls.get("path") != "serial":
            problems.append("serial run took path %r" % ls.get("path"))
        if not same(got, want, q.ordered):
            problems.append("serial: got %s" % show(got))
        knobs = {}
        if qr.random() < 0.4 and wd.nf:
            knobs["GPUAGG_SCAN_PIECE_ROWS"] = str(qr.choice([1, 2, 3, 7, 17, 100]))
        if qr.random() < 0.15:
            knobs["GPUAGG_SCAN_LOCAL_GROUPS"] = str(qr.choice([1, 2, 5]))
        if qi % 4 == 1:  # dims.h rule 9: SQLite's join after the build, or the probes
            knobs["GPUAGG_DIM_CHOICE"] = ("join", "probe")[qi // 4 % 2]
        os.environ.update(knobs)
        for th in (1, 2, 4):
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = via_gpu_query(con, q.text)
            ls = last_scan(con)
            if not same(got, want, q.ordered):
                problems.append("threads %d (path %s, %s): got %s" % (th, ls.get("path"), ls.get("why"), show(got)))
            if th > 1:
                path = ls.get("path")
                if path == "parallel":
                    stats["parallel"] += 1
                elif str(ls.get("why")).startswith(FACT_NOT_FIRST) and not q.fact_first:
                    stats["serial_documented"] += 1
                else:
                    stats["serial_other"] += 1
                    problems.append("threads %d: path %r (%s)" % (th, path, ls.get("why")))
                join = ls.get("join") or {}
                stats["order: %s" % join.get("order")] += th == 2
                if th == 2 and path == "parallel":  # planner/qdims.c
                    probe_stats(stats, join, q)
                if path == "parallel" and join.get("fact") != "f":
                    problems.append("last_scan.join names fact %r" % join.get("fact"))
        for k in knobs:
            del os.environ[k]
        host_cache_answer(wd, q, want, (1, 2, 4)[qi % 3], stats, problems)  # issue 38 §3.2
        if qi % 3 == 0:
            got = partial_answer(wd, qr, q.text)
            stats["partials"] += 1
            if got[0] == "error" and FACT_NOT_FIRST in got[1] and not q.fact_first:
                stats["partials_documented"] += 1
            elif not same(got, want, q.ordered):
                problems.append("partials: got %s" % show(got))
        stats["rows"] += len(want[1])
        stats["form_" + q.form] += 1
        stats["left"] += bool(q.left)
        stats["snowflake"] += any(d.parent for d in wd.dims)
        if problems:
            fails += 1
        rep.check("join_q%d" % qi, not problems,
                  "SEED=%d query %d on world %d (%s, %d fact rows, dims %s)\n  text: %s\n  want %s\n  %s"
                  % (SEED, qi, wd.w, wd.mode, wd.nf, [(d.name, d.kind, d.parent) for d in wd.dims],
                     q.text, show(want), "\n  ".join(problems)) if fails <= 20 else q.text[:200])
    runs = stats["parallel"] + stats["serial_other"] + stats["serial_documented"]
    print("# joins: %d queries over %d worlds (%s); %d runs at 2 and 4 threads: %d parallel, %d serial as "
          "documented, %d other; %d through partials; %d reference rows; %.1f s"
          % (QUERIES, len(worlds), ", ".join("%s %d" % (k[5:], v) for k, v in sorted(stats.items())
                                             if k.startswith("form_")),
             runs, stats["parallel"], stats["serial_documented"], stats["serial_other"], stats["partials"],
             stats["rows"], time.time() - t0))
    print("#   %d with LEFT JOIN, %d over snowflakes; at 2 threads, the order: %s"
          % (stats["left"], stats["snowflake"], ", ".join("%s %d" % (k[7:], v) for k, v in sorted(stats.items())
                                                          if k.startswith("order: "))))
    rep.check("join_parallel_share", stats["parallel"] >= 0.8 * runs,
              "only %d of %d runs parallel" % (stats["parallel"], runs))
    # issue 38, 3.1: the probe path (planner/qdims.c) serves most inner
    # joins; each other run says why (the reasons, counted)
    print("#   probe path (2 threads): %d of %d parallel runs (%d of %d inner joins; %d of them chose SQLite's "
          "join after the build); kept SQLite's join: %s"
          % (stats["probe_used"], stats["probe_runs"], stats["probe_inner_used"], stats["probe_inner"],
             stats["probe_chose_join"],
             "; ".join("%s %d" % (k[10:], v) for k, v in sorted(stats.items()) if k.startswith("probe_why:"))))
    # (the worlds' first dimension often has duplicate keys on purpose: those
    # keep SQLite's join, dims.h rule 3)
    rep.check("join_probe_share", stats["probe_runs"] == 0 or stats["probe_used"] >= 0.25 * stats["probe_runs"],
              "the probe path served %d of %d parallel runs" % (stats["probe_used"], stats["probe_runs"]))
    rep.check("join_probe_reasons", stats["probe_no_why"] == 0,
              "%d runs kept SQLite's join without a reason" % stats["probe_no_why"])
    host_cache_summary(rep, stats)


def probe_stats(stats, join, q):
    """last_scan.join.probe of a parallel run: used, or why not."""
    probe = join.get("probe") or {}
    inner = not q.left and " USING " not in q.text.upper()
    stats["probe_runs"] += 1
    stats["probe_inner"] += inner
    chose_join = (probe.get("choice") or {}).get("path") == "join"  # dims.h rule 9: built, then the join
    stats["probe_chose_join"] += chose_join
    if probe.get("used") or chose_join:
        stats["probe_used"] += 1
        stats["probe_inner_used"] += inner
        for d in probe.get("dims", []):
            stats["probe_kind_%s" % d.get("kind")] += 1
    elif probe.get("why"):
        stats["probe_why:" + re.sub(r" of \S+ | \S+ has ", " X ", probe["why"])[:70]] += 1
    else:
        stats["probe_no_why"] += 1


# ------------------------------------------------ the host cache (§3.2)

def cache_con(wd):
    """A connection of the world's own whose gpu_cache (device = 'cpu')
    holds every column of every table that a load takes (each tried alone
    first: a column of TEXT and numbers, or BLOB, is not cached)."""
    if getattr(wd, "ccon", None) is None:
        # a copy of the world's file: the process's cache is shared by every
        # connection of a file (issue 40), and the others must keep their
        # own paths
        copy = wd.path + "-ccopy.db"
        src = sqlite3.connect(wd.path)
        dst = sqlite3.connect(copy)
        src.backup(dst)
        src.close()
        dst.close()
        con = connect(copy)
        con.execute("SELECT gpuagg_config('device', 'cpu')")
        for (t,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite%'").fetchall():
            cols = [c[1] for c in con.execute("PRAGMA table_info(%s)" % t).fetchall()]
            good = []
            for c in cols:
                try:
                    con.execute("SELECT gpu_cache(?, ?)", (t, c)).fetchall()
                    good.append(c)
                except sqlite3.Error:
                    pass
            if good:
                try:
                    con.execute("SELECT gpu_cache(?, ?)", (t, ", ".join(good))).fetchall()
                except sqlite3.Error:
                    pass
        wd.ccon = con
    return wd.ccon


# dimensions whose keys the host cache's lookups take (planner/cache_join.c
# rule 3: numbers, one row a key; TEXT keys, duplicates ("null" draws
# them too) and REAL keys that
# are no integers decline)
NUMERIC_UNIQUE = ("dense", "sparse")


def host_cache_answer(wd, q, want, th, stats, problems):
    """Issue 38 §3.2: the text with every table in the host cache.  The
    answer equals the reference whether the cache answers (last_scan.path
    'cache') or declines (its reason in last_scan.why, the workers
    answer)."""
    con = cache_con(wd)
    con.execute("SELECT gpuagg_config('threads', ?)", (th,))
    got = via_gpu_query(con, q.text)
    ls = last_scan(con)
    if not same(got, want, q.ordered):
        problems.append("host cache, threads %d (path %s, %s): got %s"
                        % (th, ls.get("path"), ls.get("why"), show(got)))
    why = str(ls.get("why"))
    if ls.get("path") == "cache":
        stats["cache"] += 1
        if not why.startswith("host cache: star join"):
            problems.append("host cache: why %r" % why)
        stats["cache_snowflake"] += any(d.parent for d in wd.dims)
        stats["cache_dims_%d" % len(wd.dims)] += 1
    elif (all(d.kind in NUMERIC_UNIQUE for d in wd.dims) and "typeof" not in q.text
          and not re.search(r"\bw\b", q.text) and not why.startswith(FACT_NOT_FIRST)):
        # every key a number, one row a key: the host cache must answer
        problems.append("host cache declined: %s" % why)
    else:
        m = re.search(r"cache not used: the text joins \d+ tables(?: \(fact \w+\))?: ([^;(:0-9]*)", why)
        stats["declined: " + (m.group(1).strip() if m else why[:40])] += 1


def host_cache_summary(rep, stats):
    runs = sum(v for k, v in stats.items() if k == "cache" or k.startswith("declined: "))
    print("# joins from the host cache: %d of %d answered (%d over snowflakes; by dimensions %s); declined: %s"
          % (stats["cache"], runs, stats["cache_snowflake"],
             ", ".join("%s %d" % (k[11:], v) for k, v in sorted(stats.items()) if k.startswith("cache_dims_")),
             "; ".join("%s %d" % (k[10:], v) for k, v in sorted(stats.items()) if k.startswith("declined: "))))
    # each query whose keys the lookups take was answered (host_cache_answer);
    # the worlds are random, so the share answered depends on SEED
    rep.check("join_host_cache_answered", runs and stats["cache"] >= min(40, runs // 8) if SEED == 20261206
              else stats["cache"] >= 1, "only %d of %d queries from the host cache" % (stats["cache"], runs))


# ------------------------------------------- partials: each file's own dimensions

PARTIAL_DIMS = int(os.environ.get("PARTIAL_DIMS", "60"))


def own_dims_files(wd, r):
    """The world's fact cut at random rowids into 2-4 files, each with its
    own dimensions: the world's rows, some dropped, some changed (g, h, v),
    some doubled (a duplicate key), drawn per file; w is the same in every
    file.  Returns (read-only connections, the reference connection): the
    reference holds every file's fact rows (their rowids) and every file's
    dimension rows, file after file, each row tagged with its file in a
    column src, the dimensions' INTEGER PRIMARY KEY declared INTEGER (two
    files may hold one key)."""
    rows = [x[0] for x in wd.con.execute("SELECT rowid FROM f ORDER BY rowid")]
    k = r.randint(2, 4)
    cuts = sorted(r.sample(rows[1:], min(k - 1, max(0, len(rows) - 1)))) if rows else []
    bounds = [None] + cuts + [None]
    ranges = [("rowid >= %d" % bounds[j] if bounds[j] is not None else "1",
               "rowid < %d" % bounds[j + 1] if bounds[j + 1] is not None else "1")
              for j in range(len(bounds) - 1)]
    ranges += [("0", "0")] * (k - len(ranges))  # few fact rows: files of none
    tag = "p%d_" % r.randrange(10 ** 9)
    out = []
    for j in range(k):
        path = os.path.join(TMP, "%sw%d_o%d.db" % (tag, wd.w, j))
        c = sqlite3.connect(path, isolation_level=None)
        for st in wd.ddl:
            c.execute(st)
        c.execute("ATTACH ? AS src", (wd.path,))
        c.execute("BEGIN")
        for d in wd.dims:
            c.execute("INSERT INTO main.%s SELECT * FROM src.%s ORDER BY rowid" % (d.name, d.name))
            for (rid,) in c.execute("SELECT rowid FROM main.%s" % d.name).fetchall():
                x = r.random()
                if x < 0.2:
                    c.execute("DELETE FROM main.%s WHERE rowid = ?" % d.name, (rid,))
                elif x < 0.45:
                    c.execute("UPDATE main.%s SET g%d = ?, h%d = ?, v%d = ? WHERE rowid = ?" % (d.name, d.i, d.i, d.i),
                              (r.choice(["p", "q", "s", None]), r.choice([0, 1, 4, None]),
                               r.choice([2.5, -0.75, 1e12, None]), rid))
                elif x < 0.55 and d.kind != "dense":
                    c.execute("INSERT INTO main.%s SELECT * FROM main.%s WHERE rowid = ?" % (d.name, d.name), (rid,))
        c.execute("INSERT INTO main.w SELECT * FROM src.w")
        c.execute("INSERT INTO main.f(rowid, %s) SELECT rowid, * FROM src.f WHERE %s AND %s"
                  % ((wd.fact_cols(),) + ranges[j]))
        c.execute("COMMIT")
        c.execute("DETACH src")
        c.close()
        out.append(path)
    ref = connect(os.path.join(TMP, "%sw%d_ref.db" % (tag, wd.w)))
    ref.execute("PRAGMA synchronous=OFF")  # a scratch file: no fsync per statement
    for st in wd.ddl:
        ref.execute(re.sub(r"(k\d+) INTEGER PRIMARY KEY", r"\1 INTEGER", st))
    for name in [d.name for d in wd.dims] + ["f"]:
        ref.execute("ALTER TABLE %s ADD COLUMN src INTEGER" % name)
    for j, path in enumerate(out):
        ref.execute("ATTACH ? AS s", (path,))
        for d in wd.dims:
            ref.execute("INSERT INTO main.%s SELECT *, %d FROM s.%s ORDER BY rowid" % (d.name, j, d.name))
        ref.execute("INSERT INTO main.f(rowid, %s, src) SELECT rowid, *, %d FROM s.f ORDER BY rowid"
                    % (wd.fact_cols(), j))
        if j == 0:
            ref.execute("INSERT INTO main.w SELECT * FROM s.w")
        ref.execute("DETACH s")
    return [connect(p, ro=True) for p in out], ref


def merge_grouped(m, parts, r):
    """parts merged with gpu_query_merge in a random grouping (adjacent
    runs, file order kept), down to one."""
    parts = list(parts)
    while len(parts) > 1:
        i = r.randrange(len(parts) - 1)
        n = r.randint(2, min(3, len(parts) - i))
        blob = m.execute("SELECT gpu_query_merge(%s)" % ",".join("?" * n), parts[i:i + n]).fetchone()[0]
        parts[i:i + n] = [blob]
    if r.random() < 0.3:  # a merge of one: the same partial again
        parts = [m.execute("SELECT gpu_query_merge(?)", (parts[0],)).fetchone()[0]]
    return parts[0]


def finish_declared(blob, text, r):
    """The merged partial finished on an in-memory database that declares
    what gpu_query_partial_info says: every table of the join ("create",
    or "tables" through gpuagg.dask's own rules)."""
    m = sqlite3.connect(":memory:", isolation_level=None)
    m.enable_load_extension(True)
    m.load_extension(LIB)
    try:
        info = json.loads(m.execute("SELECT gpu_query_partial_info(?)", (blob,)).fetchone()[0])
        m.executescript(info["create"])
        m.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % sql_lit(text))
        got = ("ok", m.execute("SELECT * FROM temp.q WHERE gpuagg_partial = ?", (blob,)).fetchall())
        if last_scan(m).get("path") != "partial":
            got = ("error", "finished on path %r" % last_scan(m).get("path"))
        return got, info
    except sqlite3.Error as e:
        return ("error", str(e)), None
    finally:
        m.close()


def partial_dims_queries(rep):
    """Issue 38 section 3.4: partials of joins over files that each hold
    their own dimensions.  The shape (docs/gpu_query.md, "Partials"): the
    merged partial of files F1..Fn, finished, gives the rows of the text
    run by SQLite over one database whose fact table holds F1's fact rows,
    then F2's, ..., where a fact row of file Fi joins the dimension rows of
    Fi only.  The reference is that database with every row tagged by its
    file (src) and the text with each join condition also on src (the same
    text drawn again, JoinQuery tag=src).  PARTIAL_DIMS texts (60 by
    default), each through 2-4 files, partials at threads 1, 2 or 4 merged
    in random groupings, finished on a database declaring the tables that
    gpu_query_partial_info gives."""
    r = random.Random(SEED * 17 + 3)
    worlds = [World(w, r) for w in range(100, 100 + max(1, min(WORLDS, 6)))]
    stats = Counter()
    fails = 0
    for qi in range(PARTIAL_DIMS):
        wd = worlds[qi % len(worlds)]
        seed = SEED * 104729 + qi
        q = JoinQuery(random.Random(seed), wd, hint=True)
        qt = JoinQuery(random.Random(seed), wd, hint=True, tag="src")
        fr = random.Random(seed + 1)
        if qi % 4 == 0 or not hasattr(wd, "_own"):
            wd._own = own_dims_files(wd, fr)
        shards, ref = wd._own
        want = run(ref, gpu_text(qt.text))
        problems = []
        parts = []
        for sh in shards:
            sh.execute("SELECT gpuagg_config('threads', ?)", (fr.choice((1, 2, 4)),))
            got = run(sh, "SELECT gpu_query_partial(?)", (q.text,))
            if got[0] != "ok":
                problems.append("partial: %s" % got[1])
                break
            parts.append(got[1][0][0])
        if problems and FACT_NOT_FIRST in problems[0] and not q.fact_first:
            stats["skipped"] += 1  # the serial path (documented): no partial
            continue
        info = None
        if not problems:
            m = sqlite3.connect(":memory:")
            m.enable_load_extension(True)
            m.load_extension(LIB)
            try:
                blob = merge_grouped(m, parts, fr)
                got, info = finish_declared(blob, q.text, fr)
            except sqlite3.Error as e:
                got = ("error", str(e))
            m.close()
            if not same(got, want, q.ordered):
                problems.append("finished: got %s" % show(got))
            if info is not None:
                names = [t["table"] for t in info["tables"]]
                named = re.findall(r"(?:FROM|JOIN|,)\s+(f|d\d|w)\b(?!\.)", q.text)
                if names[:1] != ["f"] or sorted(names) != sorted(set(named)):
                    problems.append("info's tables %r" % names)
        stats["run"] += 1
        stats["rows"] += len(want[1]) if want[0] == "ok" else 0
        if problems:
            fails += 1
        rep.check("partial_dims_q%d" % qi, not problems,
                  "SEED=%d query %d on world %d (dims %s)\n  text: %s\n  reference: %s\n  want %s\n  %s"
                  % (SEED, qi, wd.w, [(d.name, d.kind, d.parent) for d in wd.dims], q.text, qt.text,
                     show(want), "\n  ".join(problems)) if fails <= 10 else q.text[:200])
    print("# partials of joins, each file its own dimensions: %d texts (%d serial as documented), "
          "%d reference rows"
          % (stats["run"], stats["skipped"], stats["rows"]))
    rep.check("partial_dims_ran", stats["run"] >= PARTIAL_DIMS // 2, repr(stats))


# ---------------------------------------------------------------- fixed cases

def fresh(name, ddl, mode="wal"):
    path = os.path.join(TMP, name + ".db")
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=%s" % mode)
    con.executescript(ddl)
    con.close()
    return connect(path), path


def parallel_equal(rep, name, con, text, threads=(2,), expect_rows=None, probe=None):
    """text through gpu_query on the parallel path equals the reference;
    probe (planner/qdims.c): None, True (the workers probed built
    dimensions, of these kinds when a tuple), or a part of the reason
    they kept SQLite's join."""
    want = run(con, gpu_text(text))
    ok, detail = True, ""
    for th in threads:
        con.execute("SELECT gpuagg_config('threads', ?)", (th,))
        got = via_gpu_query(con, text)
        ls = last_scan(con)
        if ls.get("path") != "parallel" or not same(got, want, False):
            ok = False
            detail += "threads %d: path %s (%s): got %s want %s; " % (th, ls.get("path"), ls.get("why"),
                                                                      show(got), show(want))
        pr = (ls.get("join") or {}).get("probe") or {}
        if probe is not None and not probe_is(pr, probe):
            ok = False
            detail += "threads %d: probe %r, want %r; " % (th, pr, probe)
    if expect_rows is not None and want[0] == "ok" and sorted(want[1], key=repr) != sorted(expect_rows, key=repr):
        ok = False
        detail += "the reference gives %r, the case expects %r" % (want[1], expect_rows)
    rep.check(name, ok, detail + " text: " + text)
    return want


def probe_is(pr, probe):
    """last_scan.join.probe against parallel_equal's probe."""
    if probe is True or isinstance(probe, tuple):
        kinds = tuple(d.get("kind") for d in pr.get("dims", []))
        return pr.get("used") is True and (probe is True or kinds == probe) and \
            any(d.get("probes", 0) > 0 or d.get("rows") == 0 for d in pr.get("dims", []))
    return pr.get("used") is False and probe in pr.get("why", "")


DUP = "has two rows of one key after affinity and collation"

ERRORS = [
    ("right", "SELECT d.g, count(*) FROM f RIGHT JOIN d ON f.k = d.k GROUP BY d.g",
     "gpu_query: RIGHT and FULL joins are not supported (gpu_query scans the fact table's rows: write the "
     "fact table first and LEFT JOIN its dimensions)"),
    ("full", "SELECT count(*) FROM f FULL OUTER JOIN d ON f.k = d.k",
     "gpu_query: RIGHT and FULL joins are not supported (gpu_query scans the fact table's rows: write the "
     "fact table first and LEFT JOIN its dimensions)"),
    ("natural", "SELECT count(*) FROM f NATURAL JOIN d",
     "gpu_query: NATURAL joins are not supported: name the join columns (JOIN d USING (k), or JOIN d ON "
     "f.k = d.k)"),
    ("cross_product", "SELECT d.g, sum(f.x) FROM f, d GROUP BY d.g",
     "gpu_query: d is joined without a condition (a cross product): join it by an equality to the fact "
     "table f or to a table joined to it"),
    ("cross_join_no_on", "SELECT sum(f.x) FROM f CROSS JOIN d",
     "gpu_query: d is joined without a condition (a cross product): join it by an equality to the fact "
     "table f or to a table joined to it"),
    ("not_equality", "SELECT sum(f.x) FROM f JOIN d ON f.k < d.k",
     "gpu_query: the join condition f.k < d.k is not an equality between two tables (joins that are not "
     "equalities are not supported: gpu_query joins by f.k = d.k)"),
    ("or_condition", "SELECT sum(f.x) FROM f, d WHERE f.k = d.k OR f.x = d.k",
     "gpu_query: the join condition f.k = d.k OR f.x = d.k is not an equality between two tables (joins "
     "that are not equalities are not supported: gpu_query joins by f.k = d.k)"),
    # OR binds looser than AND: the whole disjunction is one condition,
    # named whole (planner/qjoin.c read_conds; it had named its last part)
    ("or_precedence", "SELECT sum(f.x) FROM f, d WHERE f.k = d.k AND f.x > 5 OR d.g = 'a'",
     "gpu_query: the join condition f.k = d.k AND f.x > 5 OR d.g = 'a' is not an equality between two tables "
     "(joins that are not equalities are not supported: gpu_query joins by f.k = d.k)"),
    ("or_precedence_on", "SELECT sum(f.x) FROM f JOIN d ON f.k = d.k AND d.g = 'a' OR f.x = 3",
     "gpu_query: the join condition f.k = d.k AND d.g = 'a' OR f.x = 3 is not an equality between two tables "
     "(joins that are not equalities are not supported: gpu_query joins by f.k = d.k)"),
    ("three_tables", "SELECT sum(f.x) FROM f, d, e WHERE f.k = d.k AND f.k2 = e.k AND f.x + d.k = e.k",
     "gpu_query: the join condition f.x + d.k = e.k is not an equality between two tables (joins that are "
     "not equalities are not supported: gpu_query joins by f.k = d.k)"),
    ("off_path", "SELECT sum(f.x) FROM f JOIN d ON f.k = d.k JOIN e ON f.k2 = e.k WHERE d.g = e.g",
     "gpu_query: the join condition d.g = e.g joins d and e, neither of which is the other's step towards "
     "the fact table f (gpu_query runs star and snowflake joins: each table joined to one table nearer "
     "the fact)"),
    ("self_join", "SELECT sum(f.x) FROM f JOIN f AS g ON f.k = g.k",
     "gpu_query: the fact table f is named twice (self-joins of the fact table are not supported: run the "
     "query on SQLite)"),
    ("fact_left_right", "SELECT count(*) FROM d LEFT JOIN f ON f.k = d.k",
     "gpu_query: the fact table f is the right side of a LEFT JOIN (gpu_query scans the fact's rows: "
     "write FROM f LEFT JOIN d ...)"),
    ("table_function", "SELECT count(*) FROM f JOIN json_each('[1]') AS j ON f.k = j.value",
     "gpu_query: FROM names a subquery or a table-valued function (a join names tables: make it a table, "
     "or run the query on SQLite)"),
    ("view", "SELECT count(*) FROM f JOIN dv ON f.k = dv.k",
     "gpu_query: dv is a view (a join names tables; a view's rows: run the query on SQLite)"),
    ("hint_unknown", "SELECT /* gpuagg_fact(zz) */ count(*) FROM f JOIN d ON f.k = d.k",
     "gpu_query: the hint gpuagg_fact(zz) names no table of FROM (name a table or its alias)"),
    ("ambiguous", "SELECT k, count(*) FROM f JOIN d ON f.k = d.k GROUP BY k",
     "gpu_query: ambiguous column name: k"),
    ("subquery", "SELECT d.g, sum(f.x) FROM f JOIN d ON f.k = d.k WHERE f.x > (SELECT avg(x) FROM f) GROUP BY d.g",
     "gpu_query: a join's text with a subquery is not supported yet (issue 38): aggregate the join in gpu_query "
     "and read the subquery's value as a parameter"),
    ("subquery_in_from", "SELECT sum(f.x) FROM f JOIN (SELECT k FROM d) AS s ON f.k = s.k",
     "gpu_query: a subquery in FROM is not supported (FROM names one table, a view or a WITH expression)"),
]


def error_cases(rep):
    con, _ = fresh("errors", """
        CREATE TABLE f(k INTEGER, k2 INTEGER, x REAL);
        CREATE TABLE d(k INTEGER PRIMARY KEY, g TEXT);
        CREATE TABLE e(k INTEGER PRIMARY KEY, g TEXT);
        CREATE VIEW dv AS SELECT * FROM d;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
        INSERT INTO f SELECT i % 5, i % 3, i * 0.5 FROM n;
        INSERT INTO d VALUES (0, 'a'), (1, 'b'), (2, 'c');
        INSERT INTO e VALUES (0, 'a'), (1, 'b');""")
    for name, text, msg in ERRORS:
        got = via_gpu_query(con, text)
        rep.check("error_" + name, got == ("error", msg), "got %r\n  want %r" % (got, msg))
    # parentheses around AND-ed conditions are opened (qjoin.c read_conds):
    # an edge inside them joins, as SQLite reads it
    for name, text in (("paren_and", "SELECT d.g, sum(f.x) FROM f, d WHERE (f.k = d.k AND d.g <> 'a') GROUP BY d.g"),
                       ("paren_nested", "SELECT d.g, count(*) FROM f, d WHERE ((f.k = d.k) AND (d.g = 'b' OR "
                        "f.x < 10)) GROUP BY d.g")):
        want = run(con, gpu_text(text))
        got = via_gpu_query(con, text)
        rep.check("error_none_" + name, got[0] == "ok" and same(got, want, False), "got %r\n  want %r" % (got, want))
    # and through gpu_query_partial, named as that function
    got = run(con, "SELECT gpu_query_partial(?)", (ERRORS[0][1],))
    rep.check("error_partial_named", got == ("error", "gpu_query_partial: " + ERRORS[0][2][len("gpu_query: "):]),
              repr(got))
    got = run(con, "SELECT gpu_query_partial(?)", ("SELECT d.g, sum(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.g",))
    rep.check("error_partial_needs_hint", got == (
        "error", "gpu_query_partial: a join's partial needs its fact table named in the text (SELECT /* "
        "gpuagg_fact(f) */ ...): every file and the finishing database must choose the same fact, whatever "
        "their rows"), repr(got))
    got = run(con, "SELECT length(gpu_query_partial(?)) > 0",
              ("SELECT /* gpuagg_fact(f) */ d.g, sum(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.g",))
    rep.check("partial_with_hint", got == ("ok", [(1,)]), repr(got))


def semantics_cases(rep):
    """Issue 38 section 2, each a case (SQLite 3.40's rules), on the
    parallel path at 2 and 4 threads."""
    con, _ = fresh("sem", """
        CREATE TABLE f(nk TEXT, ik INTEGER, uk, rk REAL, k, x REAL);
        CREATE TABLE d(key TEXT COLLATE NOCASE, tk TEXT, k TEXT COLLATE NOCASE, g TEXT);
        CREATE TABLE r(id INTEGER, g TEXT);
        CREATE TABLE dd(id INTEGER, g TEXT);
        INSERT INTO f VALUES ('a', 5, 5, 1.0, 'a', 1.5), ('A', 7, '5', 2.0, 'B', 2.25),
                             ('b', NULL, NULL, NULL, NULL, 4.0), ('B', 5, 7, 1.0, 'A', 8.0);
        INSERT INTO d VALUES ('A', '5', 'a', 'one'), ('b', '05', 'b', 'two'), (NULL, NULL, NULL, 'nul'),
                             ('x', ' 7', 'X', 'sev');
        INSERT INTO r VALUES (1, 'int one'), (2, 'int two'), (NULL, 'nul');
        INSERT INTO dd VALUES (5, 'first'), (5, 'second'), (7, 'third');""")
    T = (2, 4)
    # collation follows the operand order as written
    a = parallel_equal(rep, "coll_fact_left_binary", con,
                       "SELECT d.g, count(*), sum(f.x) FROM f JOIN d ON f.nk = d.key GROUP BY d.g", T,
                       [("one", 1, 2.25), ("two", 1, 4.0)], probe=("hash",))
    b = parallel_equal(rep, "coll_dim_left_nocase", con,
                       "SELECT d.g, count(*), sum(f.x) FROM f JOIN d ON d.key = f.nk GROUP BY d.g", T,
                       [("one", 2, 3.75), ("two", 2, 12.0)], probe=("hash",))
    rep.check("coll_order_matters", a != b, "the two operand orders gave the same rows")
    parallel_equal(rep, "coll_comma_where", con,
                   "SELECT d.g, count(*) FROM f, d WHERE d.key = f.nk GROUP BY d.g", T,
                   [("one", 2), ("two", 2)], probe=True)
    c = parallel_equal(rep, "coll_using_fact_left", con,
                       "SELECT d.g, count(*) FROM f JOIN d USING (k) GROUP BY d.g", T, [("one", 1)],
                       probe=True)
    # d JOIN f USING (k): NOCASE, the fact not written first: the serial
    # path (qjoin.c rule 7), equal to SQLite
    text = "SELECT /* gpuagg_fact(f) */ d.g, count(*) FROM d JOIN f USING (k) GROUP BY d.g"
    want = run(con, gpu_text(text))
    con.execute("SELECT gpuagg_config('threads', 2)")
    got = via_gpu_query(con, text)
    ls = last_scan(con)
    rep.check("coll_using_dim_left_nocase", same(got, want, False) and sorted(want[1]) ==
              [("one", 2), ("two", 1)] and ls.get("path") == "serial" and
              ls.get("why", "").startswith(FACT_NOT_FIRST), "%s %s %r" % (show(got), show(want), ls.get("why")))
    rep.check("coll_using_order_matters", c != want, "")
    # affinity: an INTEGER fact key against TEXT keys: '5' and '05' are 5
    parallel_equal(rep, "affinity_integer_text", con,
                   "SELECT d.g, count(*) FROM f JOIN d ON f.ik = d.tk GROUP BY d.g", T,
                   [("one", 2), ("two", 2), ("sev", 1)], probe="d " + DUP)
    # an untyped fact column against TEXT converts nothing: 5 <> '5'
    parallel_equal(rep, "affinity_untyped_text", con,
                   "SELECT d.g, count(*) FROM f JOIN d ON f.uk = d.tk GROUP BY d.g", T, [("one", 1)],
                   probe=True)
    # REAL 1.0 matches INTEGER 1
    parallel_equal(rep, "real_matches_integer", con,
                   "SELECT r.g, count(*), sum(f.x) FROM f JOIN r ON f.rk = r.id GROUP BY r.g", T,
                   [("int one", 2, 9.5), ("int two", 1, 2.25)], probe=("dense",))
    # NULL keys never match
    parallel_equal(rep, "null_never_matches", con,
                   "SELECT count(*), sum(f.x) FROM f JOIN d ON f.nk = d.key WHERE d.key IS NULL", T, [(0, None)],
                   probe=True)
    parallel_equal(rep, "null_left_join_keeps", con,
                   "SELECT d.g, count(*) FROM f LEFT JOIN r ON f.rk = r.id GROUP BY r.g", T,
                   probe=True)
    # duplicate dimension keys: a fact row joins every match
    parallel_equal(rep, "duplicate_keys_every_match", con,
                   "SELECT dd.g, count(*), sum(f.x) FROM f JOIN dd ON f.ik = dd.id GROUP BY dd.g", T,
                   [("first", 2, 9.5), ("second", 2, 9.5), ("third", 1, 2.25)], probe="dd " + DUP)
    parallel_equal(rep, "duplicate_keys_total", con,
                   "SELECT count(*), sum(f.x), total(dd.id) FROM f JOIN dd ON f.ik = dd.id", T, [(5, 21.25, 27.0)], probe="dd " + DUP)
    # WHERE on a LEFT-joined dimension keeps the unmatched fact rows
    parallel_equal(rep, "left_where_is_null", con,
                   "SELECT count(*), sum(f.x) FROM f LEFT JOIN r ON f.rk = r.id WHERE r.g IS NULL", T,
                   [(1, 4.0)], probe=True)
    parallel_equal(rep, "left_on_filter", con,
                   "SELECT r.g, count(*) FROM f LEFT JOIN r ON f.rk = r.id AND r.id > 1 GROUP BY r.g", T,
                   [(None, 3), ("int two", 1)], probe=True)
    # planner/qdims.c and engine/scan/dims.h: the probe path's own rules
    probe_cases(rep, con, T)


def probe_cases(rep, con, T):
    """Issue 38, 3.1: the workers probe dimensions built once per call."""
    con.executescript("""
        CREATE TABLE IF NOT EXISTS mk(a INTEGER, b TEXT COLLATE RTRIM, g TEXT, PRIMARY KEY (a, b));
        DELETE FROM mk;
        INSERT INTO mk VALUES (5, 'a', 'five a'), (7, 'b', 'seven b'), (1, 'A', 'one A');""")
    # a composite key: INTEGER with REAL, TEXT under RTRIM ('a  ' = 'a')
    parallel_equal(rep, "probe_composite_rtrim", con,
                   "SELECT mk.g, count(*), sum(f.x) FROM f JOIN mk ON mk.a = f.rk * 5 / 5 AND mk.b = f.nk "
                   "GROUP BY mk.g", T, probe="a condition reads the fact table and a dimension but is not")
    parallel_equal(rep, "probe_composite", con,
                   "SELECT mk.g, count(*), sum(f.x) FROM f JOIN mk ON mk.a = f.ik AND mk.b = f.k "
                   "GROUP BY mk.g", T, probe=("hash",))
    # a term over the fact and a dimension: arithmetic reads the value back
    parallel_equal(rep, "probe_mixed_arith", con,
                   "SELECT sum(f.x * r.id), total(r.id + f.ik) FROM f JOIN r ON f.rk = r.id", T, probe=True)
    parallel_equal(rep, "probe_mixed_compare", con,
                   "SELECT sum(CASE WHEN f.x > r.id THEN 1 END) FROM f JOIN r ON f.rk = r.id", T,
                   probe="together with a comparison")
    # a dimension's filter and a HAVING over its term, built per dimension row
    parallel_equal(rep, "probe_dim_filter_having", con,
                   "SELECT r.g, count(*) FROM f JOIN r ON f.rk = r.id WHERE r.g LIKE 'int%' "
                   "GROUP BY r.g HAVING r.g <> 'int two'", T, [("int one", 2)], probe=("dense",))
    # an error a dimension row raises that no fact row reaches: SQLite's
    # join never evaluates it; the build fails and the workers keep it
    con.execute("INSERT INTO r VALUES (99, 'far')")
    try:
        parallel_equal(rep, "probe_build_error_keeps_join", con,
                       "SELECT CASE WHEN r.id = 99 THEN abs(-9223372036854775807 - 1) ELSE r.g END, count(*) "
                       "FROM f JOIN r ON f.rk = r.id GROUP BY 1", T, [("int one", 2), ("int two", 1)],
                       probe="building r failed (integer overflow)")
    finally:
        con.execute("DELETE FROM r WHERE id = 99")
    # the cap (dims.h rule 4): past it, SQLite's join in every worker
    os.environ["GPUAGG_DIM_BYTES"] = "100"
    try:
        parallel_equal(rep, "probe_cap_keeps_join", con,
                       "SELECT r.g, count(*) FROM f JOIN r ON f.rk = r.id GROUP BY r.g", T,
                       probe="passed its cap of 100 bytes")
    finally:
        del os.environ["GPUAGG_DIM_BYTES"]
    # the A/B switch
    os.environ["GPUAGG_DIM_PROBE"] = "0"
    try:
        parallel_equal(rep, "probe_off", con,
                       "SELECT r.g, count(*) FROM f JOIN r ON f.rk = r.id GROUP BY r.g", T,
                       probe="the probe path is off")
    finally:
        del os.environ["GPUAGG_DIM_PROBE"]
    choice_cases(rep)
    # dims.h rule 8: a key range ahead of the probes, only where the fact
    # column's affinity is numeric; exact on REAL, TEXT, BLOB and NULL keys
    rc, _ = fresh("ranges", """
        CREATE TABLE dd(id INTEGER PRIMARY KEY, m INTEGER, g TEXT);
        CREATE TABLE fi(k INTEGER, x REAL);
        CREATE TABLE fr(k REAL, x REAL);
        CREATE TABLE fu(k, x REAL);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
        INSERT INTO dd SELECT i, i / 10, 'g' || (i % 3) FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
        INSERT INTO fi SELECT CASE i % 7 WHEN 0 THEN 44.0 WHEN 1 THEN 44.5 WHEN 2 THEN 'abc' WHEN 3 THEN NULL
            WHEN 4 THEN x'2c' WHEN 5 THEN '45' ELSE i % 120 END, i * 0.25 FROM n;
        INSERT INTO fr SELECT k, x FROM fi;
        INSERT INTO fu SELECT k, x FROM fi;
        INSERT INTO fu VALUES ('41', 1.5), ('042', 2.5);""")
    for name, text, want_range in (
            ("probe_range_int", "SELECT dd.g, count(*), sum(fi.x) FROM fi JOIN dd ON fi.k = dd.id "
             "WHERE dd.m = 4 GROUP BY dd.g", [40, 49]),
            ("probe_range_real", "SELECT dd.g, count(*), sum(fr.x) FROM fr, dd WHERE dd.id = fr.k "
             "AND dd.m = 4 GROUP BY dd.g", [40, 49]),
            ("probe_range_untyped_none", "SELECT dd.g, count(*), sum(fu.x) FROM fu JOIN dd ON fu.k = dd.id "
             "WHERE dd.m = 4 GROUP BY dd.g", None),
            ("probe_range_scattered_none", "SELECT dd.g, count(*) FROM fi JOIN dd ON fi.k = dd.id "
             "WHERE dd.g = 'g1' GROUP BY dd.g", None),
            ("probe_range_empty", "SELECT count(*), sum(fi.x) FROM fi JOIN dd ON fi.k = dd.id WHERE dd.m = 77",
             [1, 0])):
        parallel_equal(rep, name, rc, text, (2, 4), probe=True)
        pr = (last_scan(rc).get("join") or {}).get("probe") or {}
        got = [d.get("range", "absent") for d in pr.get("dims", [])]
        rep.check(name + "_range", got == [want_range], "ranges %r, want [%r]: %s" % (got, want_range, text))


def choice_cases(rep):
    """dims.h rule 9: per call, the probes or SQLite's join (one piece a
    worker), from the kept shares the build measured; GPUAGG_DIM_CHOICE
    forces either; every answer equal."""
    con, _ = fresh("choice", """
        CREATE TABLE dm(id INTEGER PRIMARY KEY, g TEXT, h INTEGER);
        CREATE TABLE dl(id INTEGER PRIMARY KEY, g TEXT, h INTEGER);
        CREATE TABLE fc(k INTEGER, j INTEGER, m INTEGER, x REAL);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
        INSERT INTO dl SELECT i, CASE WHEN i IN (7, 4051) THEN 'rare' ELSE 'g' END, i % 3 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
        INSERT INTO dm SELECT i, CASE WHEN i IN (7, 151) THEN 'rare' WHEN i BETWEEN 100 AND 103 THEN 'run'
            ELSE 'g' || (i % 2) END, i % 5 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
        INSERT INTO fc SELECT 1 + i * 7919 % 200, 1 + i % 200, 1 + i * 7919 % 5000, i * 0.5 FROM n;
        ANALYZE;""")
    T = (2, 4)

    def case(name, text, want, env=None, left=False):
        os.environ.update(env or {})
        try:
            w = parallel_equal(rep, name, con, text, T)
            for th in T:
                con.execute("SELECT gpuagg_config('threads', ?)", (th,))
                got = via_gpu_query(con, text)
                ls = last_scan(con)
                pr = (ls.get("join") or {}).get("probe") or {}
                ch = pr.get("choice") or {}
                if env:
                    ok = ch.get("forced") is True and ch.get("path") == want and \
                        pr.get("used") == (want == "probe") and \
                        (want == "probe" or ls.get("pieces") == th) and same(got, w, False)
                else:
                    ok = choice_is(pr, ls, want, th) and same(got, w, False)
                rep.check("%s_t%d" % (name, th), ok, "threads %d: probe %r, pieces %s, want %s: %s"
                          % (th, pr, ls.get("pieces"), want, text))
        finally:
            for k in env or {}:
                del os.environ[k]

    # two scattered keys of 200 kept: few of 20,000 fact rows pass
    case("choice_rare_join", "SELECT dm.h, count(*), sum(fc.x) FROM fc JOIN dm ON fc.k = dm.id "
         "WHERE dm.g = 'rare' GROUP BY dm.h", "join")
    # half the keys kept: the seeks would cost more than the calls
    case("choice_half_probe", "SELECT dm.h, count(*), sum(fc.x) FROM fc JOIN dm ON fc.k = dm.id "
         "WHERE dm.g = 'g1' GROUP BY dm.h", "probe")
    # four adjacent keys: rule 8's range drops the other fact rows inline
    case("choice_range_probe", "SELECT dm.h, count(*), sum(fc.x) FROM fc JOIN dm ON fc.k = dm.id "
         "WHERE dm.g = 'run' GROUP BY dm.h", "probe")
    # two dimensions: the rare one decides (its share times the other's)
    case("choice_two_dims_join", "SELECT a.h, b.h, count(*) FROM fc JOIN dm AS a ON fc.k = a.id "
         "JOIN dm AS b ON fc.j = b.id WHERE a.g = 'rare' AND b.g <> 'run' GROUP BY a.h, b.h", "join")
    # a range over half the keys ahead of a rare dimension: the estimates
    # favour the join, but the range keeps the probes (SSB Q4.3's shape)
    case("choice_range_keeps_probe", "SELECT a.h, count(*) FROM fc JOIN dm AS a ON fc.k = a.id "
         "JOIN dm AS b ON fc.j = b.id WHERE a.id <= 90 AND b.g = 'rare' GROUP BY a.h", "probe")
    # a rare key of a table as large as a quarter of the fact: its Bloom
    # filter, built again by each worker, costs more than the calls
    case("choice_big_dim_probe", "SELECT dl.h, count(*), sum(fc.x) FROM fc JOIN dl ON fc.m = dl.id "
         "WHERE dl.g = 'rare' GROUP BY dl.h", "probe")
    # rule 10: after a build chose the join, the text's next calls run it
    # unbuilt, and every 8th call builds and weighs again
    text = "SELECT dm.h, count(*), sum(fc.x) FROM fc JOIN dm ON fc.k = dm.id WHERE dm.g = 'rare' GROUP BY dm.h"
    want = run(con, gpu_text(text))
    con.execute("SELECT gpuagg_config('threads', 2)")
    seen, bad = [], []
    for i in range(16):
        got = via_gpu_query(con, text)
        ls = last_scan(con)
        pr = (ls.get("join") or {}).get("probe") or {}
        seen.append(bool((pr.get("choice") or {}).get("remembered")))
        if not same(got, want, False) or not choice_is(pr, ls, "join", 2):
            bad.append("call %d: %r %s" % (i, pr, show(got)))
    rep.check("choice_remembered", not bad and seen.count(False) == 2 and
              seen.index(False) + 8 == len(seen) - 1 - seen[::-1].index(False),
              "built at %r; %s" % ([i for i, x in enumerate(seen) if not x], "; ".join(bad)))
    # the knob, both ways
    case("choice_forced_probe", "SELECT dm.h, count(*) FROM fc JOIN dm ON fc.k = dm.id WHERE dm.g = 'rare' "
         "GROUP BY dm.h", "probe", {"GPUAGG_DIM_CHOICE": "probe"})
    case("choice_forced_join", "SELECT dm.h, count(*) FROM fc JOIN dm ON fc.k = dm.id WHERE dm.g = 'g1' "
         "GROUP BY dm.h", "join", {"GPUAGG_DIM_CHOICE": "join"})
    # SQLite's join chosen at plan time (the probe path off) also runs one
    # piece a worker
    os.environ["GPUAGG_DIM_PROBE"] = "0"
    try:
        for th in T:
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            via_gpu_query(con, "SELECT dm.h, count(*) FROM fc JOIN dm ON fc.k = dm.id GROUP BY dm.h")
            ls = last_scan(con)
            rep.check("choice_off_pieces_t%d" % th, ls.get("path") == "parallel" and ls.get("pieces") == th,
                      "path %s, pieces %s" % (ls.get("path"), ls.get("pieces")))
    finally:
        del os.environ["GPUAGG_DIM_PROBE"]


def fact_cases(rep):
    con, path = fresh("facts", """
        CREATE TABLE a(id INTEGER PRIMARY KEY, k INTEGER, x REAL);
        CREATE TABLE b(id INTEGER PRIMARY KEY, g TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
        INSERT INTO a SELECT i, i % 4, i * 0.25 FROM n;
        INSERT INTO b SELECT i, 'g' || (i % 2) FROM (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2
                                                     UNION ALL SELECT 3);""")
    con.execute("SELECT gpuagg_config('threads', 2)")

    def fact(text):
        got = via_gpu_query(con, text)
        return got[0], (last_scan(con).get("join") or {})
    st, j = fact("SELECT b.g, sum(a.x) FROM b, a WHERE a.k = b.id GROUP BY b.g")
    # written second, the fact is scanned first all the same (qjoin.c rule 5)
    rep.check("fact_count", st == "ok" and j.get("fact") == "a" and j.get("chosen_by") == "count" and
              last_scan(con).get("path") == "parallel" and str(j.get("order")).startswith("fact first"),
              repr((j, last_scan(con).get("why"))))
    # a dimension keyed by dates spans more rowids than the fact has rows:
    # rows are counted (up to 65,536), not read from the span
    con.execute("CREATE TABLE dd(d INTEGER PRIMARY KEY, g TEXT)")
    con.execute("INSERT INTO dd VALUES (19920101, 'x'), (19981231, 'y')")
    st, j = fact("SELECT dd.g, count(*) FROM dd, a WHERE a.k = dd.d GROUP BY dd.g")
    rep.check("fact_count_not_span", st == "ok" and j.get("fact") == "a", repr(j))
    st, j = fact("SELECT b.g, count(*) FROM a JOIN b ON a.k = b.id GROUP BY b.g")
    rep.check("fact_plan_rowid_range_first", st == "ok" and j.get("plan", [""])[0].startswith(
        "SEARCH a USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)") and all(
        p.startswith("SEARCH b USING INTEGER PRIMARY KEY (rowid=?)") for p in j.get("plan", [])[1:]), repr(j))
    st, j = fact("SELECT /* gpuagg_fact(b) */ b.g, count(*) FROM a JOIN b ON a.k = b.id GROUP BY b.g")
    rep.check("fact_hint", st == "ok" and j.get("fact") == "b" and j.get("chosen_by") == "hint" and
              j.get("dims", [{}])[0].get("table") == "a", repr(j))
    w = sqlite3.connect(path, isolation_level=None)
    w.execute("ANALYZE")
    w.execute("UPDATE sqlite_stat1 SET stat = '1000 1' WHERE tbl = 'b'")  # b claims the most rows
    w.close()
    con.close()
    con = connect(path)
    con.execute("SELECT gpuagg_config('threads', 2)")
    got = via_gpu_query(con, "SELECT b.g, sum(a.x) FROM a JOIN b ON a.k = b.id GROUP BY b.g")
    j = last_scan(con).get("join") or {}
    want = run(con, gpu_text("SELECT b.g, sum(a.x) FROM a JOIN b ON a.k = b.id GROUP BY b.g"))
    rep.check("fact_sqlite_stat1", j.get("fact") == "b" and j.get("chosen_by") == "sqlite_stat1" and
              same(got, want, False), "%r %s %s" % (j, show(got), show(want)))
    # a tie: the first written
    con2, _ = fresh("tie", """
        CREATE TABLE p(id INTEGER PRIMARY KEY, k INTEGER, x REAL);
        CREATE TABLE q2(id INTEGER PRIMARY KEY, k INTEGER, x REAL);
        INSERT INTO p VALUES (1, 1, 1.0), (2, 2, 2.0);
        INSERT INTO q2 VALUES (1, 1, 4.0), (2, 2, 8.0);""")
    con2.execute("SELECT gpuagg_config('threads', 2)")
    for first, other in (("p", "q2"), ("q2", "p")):
        got = via_gpu_query(con2, "SELECT sum(%s.x) FROM %s JOIN %s ON %s.k = %s.id" % (first, first, other,
                                                                                     first, other))
        j = last_scan(con2).get("join") or {}
        rep.check("fact_tie_first_%s" % first, got[0] == "ok" and j.get("fact") == first, repr(j))


def serial_cases(rep):
    con, path = fresh("serial", """
        CREATE TABLE f(k INTEGER, x REAL);
        CREATE TABLE d(k INTEGER PRIMARY KEY, g TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
        INSERT INTO f SELECT i % 3, i * 0.5 FROM n;
        INSERT INTO d VALUES (0, 'a'), (1, 'b'), (2, 'c');""")
    con.execute("SELECT gpuagg_config('threads', 2)")
    con.execute("CREATE TEMP TABLE td(k INTEGER PRIMARY KEY, g TEXT)")
    con.execute("INSERT INTO td SELECT * FROM d")
    other = os.path.join(TMP, "serial_other.db")
    if os.path.exists(other):
        os.remove(other)
    o = sqlite3.connect(other)
    o.executescript("CREATE TABLE ad(k INTEGER PRIMARY KEY, g TEXT); INSERT INTO ad VALUES (0, 'x'), (1, 'y');")
    o.close()
    con.execute("ATTACH ? AS aux", (other,))
    for name, text, why in (
            ("temp_dim", "SELECT td.g, sum(f.x) FROM f JOIN td ON f.k = td.k GROUP BY td.g",
             "the join reads tables of two schemas"),
            ("attached_dim", "SELECT ad.g, sum(f.x) FROM f JOIN aux.ad ON f.k = ad.k GROUP BY ad.g",
             "the join reads tables of two schemas"),
            ("fact_not_first_left", "SELECT d.g, count(*) FROM d LEFT JOIN f ON f.k = d.k GROUP BY d.g",
             None),
            ("fact_not_first_using", "SELECT d.g, sum(f.x) FROM d JOIN f USING (k) GROUP BY d.g", FACT_NOT_FIRST)):
        want = run(con, gpu_text(text))
        got = via_gpu_query(con, text)
        ls = last_scan(con)
        if why is None:  # d LEFT JOIN f: d has fewer rows, the fact is f: refused
            rep.check("serial_" + name, got[0] == "error" and "right side of a LEFT JOIN" in got[1], repr(got))
            continue
        rep.check("serial_" + name, same(got, want, False) and ls.get("path") == "serial" and
                  str(ls.get("why")).startswith(why), "%s %s %r" % (show(got), show(want), ls.get("why")))
    # an authorizer that hides a dimension's column: the serial path,
    # where SQLite applies it (planner/path.c rule 10)
    text = "SELECT d.g, sum(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.g"

    def auth(action, a1, a2, db, src):
        return sqlite3.SQLITE_IGNORE if action == sqlite3.SQLITE_READ and (a1, a2) == ("d", "g") else \
            sqlite3.SQLITE_OK
    con.set_authorizer(auth)
    want = run(con, gpu_text(text))
    got = via_gpu_query(con, text)
    ls = last_scan(con)
    con.set_authorizer(None)
    rep.check("serial_authorizer_dimension", same(got, want, False) and ls.get("path") == "serial" and
              str(ls.get("why")).startswith("the connection's authorizer changes the statement") and
              want[1] and all(r[0] is None for r in want[1]), "%s %s %r" % (show(got), show(want), ls.get("why")))
    # the cache declines a join, naming it
    con.execute("SELECT gpu_cache('f', 'k,x')")
    text = "SELECT d.g, sum(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.g"
    want = run(con, gpu_text(text))
    got = via_gpu_query(con, text)
    ls = last_scan(con)
    rep.check("cache_declines_join", same(got, want, False) and ls.get("path") == "parallel" and
              str(ls.get("why")).startswith("cache not used: the text joins 2 tables (fact f)"), repr(ls.get("why")))
    con.execute("SELECT gpu_cache_drop('f')") if False else None


SSB_SF = 0.01


def choice_is(pr, ls, want, threads):
    """last_scan.join.probe of a call that built its dimensions: rule 9
    chose want, not forced, with the reason and one piece a worker for
    SQLite's join."""
    ch = pr.get("choice") or {}
    if ch.get("path") != want or ch.get("forced") is not False:
        return False
    if want == "probe":
        return probe_is(pr, True) and ch.get("remembered") is False
    if ch.get("remembered"):  # rule 10: an earlier call's build decided, none now
        return pr.get("used") is False and ls.get("pieces") == threads and \
            "an earlier call's build chose SQLite's join" in pr.get("why", "") and \
            all(d.get("rows") == 0 and d.get("probes") == 0 for d in pr.get("dims", []))
    return pr.get("used") is False and "few fact rows pass the dimensions' filters" in pr.get("why", "") \
        and ch.get("join_ms", 1e9) < ch.get("probe_ms", 0) and ls.get("pieces") == threads


def ssb_cases(rep):
    if os.environ.get("SSB") == "0":
        rep.skip("ssb", "SSB=0")
        return
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import ssb  # bench/ssb.py
    path = os.path.join(TMP, "ssb.db")
    c = sqlite3.connect(path, isolation_level=None)
    ssb.fill(c, SSB_SF)
    c.close()
    con = connect(path)
    # two shard files of lineorder, each with every dimension
    shards = []
    n = con.execute("SELECT max(rowid) FROM lineorder").fetchone()[0]
    ddl = [x[0] for x in con.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND "
                                     "name NOT LIKE 'sqlite%'")]
    for j, (lo, hi) in enumerate(((0, n // 3), (n // 3, n + 1))):
        sp = os.path.join(TMP, "ssb_s%d.db" % j)
        s = sqlite3.connect(sp, isolation_level=None)
        s.execute("ATTACH ? AS src", (path,))
        for d in ddl:
            s.execute(d)
        for t in ("customer", "supplier", "part", "dwdate"):
            s.execute("INSERT INTO main.%s SELECT * FROM src.%s" % (t, t))
        s.execute("INSERT INTO main.lineorder SELECT * FROM src.lineorder WHERE rowid > ? AND rowid <= ?", (lo, hi))
        s.execute("DETACH src")
        s.close()
        shards.append(connect(sp, ro=True))
    # the host cache (issue 38 §3.2): every table's columns in gpu_cache
    # (on a copy: the process's cache is shared by every connection of a
    # file, issue 40, and con must keep its own paths)
    hcopy = path + "-hcopy.db"
    src = sqlite3.connect(path)
    dst = sqlite3.connect(hcopy)
    src.backup(dst)
    src.close()
    dst.close()
    hc = connect(hcopy)
    hc.execute("SELECT gpuagg_config('device', 'cpu')")
    for t, cols in ssb.CACHE_COLUMNS.items():
        hc.execute("SELECT gpu_cache(?, ?)", (t, cols)).fetchall()
    for name, text in ssb.QUERIES.items():
        want = run(con, gpu_text(text))
        problems = []
        con.execute("BEGIN")
        got = via_gpu_query(con, text)
        if last_scan(con).get("path") != "serial" or not same(got, want, True):
            problems.append("serial: %s" % show(got))
        con.execute("COMMIT")
        for th, pieces in ((1, None), (2, None), (4, None), (2, "7")):
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            if pieces:
                os.environ["GPUAGG_SCAN_PIECE_ROWS"] = pieces
            got = via_gpu_query(con, text)
            os.environ.pop("GPUAGG_SCAN_PIECE_ROWS", None)
            ls = last_scan(con)
            # threads = 1 without GROUP BY: the serial path (planner/path.c rule 1)
            if (ls.get("path") != "parallel" and th > 1) or not same(got, want, True):
                problems.append("threads %d pieces %s: path %s (%s) %s" % (th, pieces, ls.get("path"),
                                                                           ls.get("why"), show(got)))
            plan = (ls.get("join") or {}).get("plan") or []
            if th == 2 and not pieces and not (plan and plan[0].startswith("SEARCH lineorder USING INTEGER "
                                                                        "PRIMARY KEY (rowid>? AND rowid<?)")):
                problems.append("plan %r" % plan)
            pr = (ls.get("join") or {}).get("probe") or {}
            # planner/qdims.c builds every SSB query's dimensions; dims.h
            # rule 9 then probes them or runs SQLite's join, one piece a worker
            # (which one at SF 0.01 follows the estimates; SF 1's: RESULTS)
            ch = (pr.get("choice") or {}).get("path")
            if th > 1 and not pieces and not (ch in ("probe", "join") and choice_is(pr, ls, ch, th)):
                problems.append("threads %d: probe %r, pieces %s" % (th, pr, ls.get("pieces")))
        for forced in ("probe", "join"):  # both paths, every query (rule 9's knob)
            os.environ["GPUAGG_DIM_CHOICE"] = forced
            con.execute("SELECT gpuagg_config('threads', 2)")
            got = via_gpu_query(con, text)
            os.environ.pop("GPUAGG_DIM_CHOICE", None)
            ls = last_scan(con)
            pr = (ls.get("join") or {}).get("probe") or {}
            if not same(got, want, True) or (pr.get("choice") or {}).get("path") != forced or \
                    not (pr.get("choice") or {}).get("forced") or pr.get("used") != (forced == "probe"):
                problems.append("GPUAGG_DIM_CHOICE=%s: probe %r %s" % (forced, pr, show(got)))
        for th in (1, 2, 4):
            hc.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = via_gpu_query(hc, text)
            ls = last_scan(hc)
            if ls.get("path") != "cache" or not same(got, want, True):
                problems.append("host cache, threads %d: path %s (%s) %s" % (th, ls.get("path"), ls.get("why"),
                                                                             show(got)))
        # a join's partial names its fact (qjoin.c rule 8)
        text = re.sub(r"(?i)^\s*select", "SELECT /* gpuagg_fact(lineorder) */", text, count=1)
        m = sqlite3.connect(":memory:", isolation_level=None)
        m.enable_load_extension(True)
        m.load_extension(LIB)
        try:
            parts = [s.execute("SELECT gpu_query_partial(?)", (text,)).fetchone()[0] for s in shards]
            for s in shards:  # each file's partial probes its own dimensions
                ls = last_scan(s)
                pr = (ls.get("join") or {}).get("probe") or {}
                if ls.get("path") == "parallel" and not pr.get("used") and \
                        (pr.get("choice") or {}).get("path") != "join":
                    problems.append("partial: probe %r" % pr)
            blob = m.execute("SELECT gpu_query_merge(?, ?)", parts).fetchone()[0]
            for d in ddl:
                m.execute(d)
            m.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % sql_lit(text))
            got = ("ok", m.execute("SELECT * FROM temp.q WHERE gpuagg_partial = ?", (blob,)).fetchall())
        except sqlite3.Error as e:
            got = ("error", str(e))
        m.close()
        if not same(got, want, True):
            problems.append("partials: %s" % show(got))
        rep.check("ssb_%s" % name, want[0] == "ok" and not problems,
                  "%s\n  want %s\n  %s" % (text, show(want), "\n  ".join(problems)))


# ---------------------------------------- the host cache's contract (§3.2)

HOST_CACHE_DDL = """
CREATE TABLE f(k INTEGER, nk, tk TEXT, rk REAL, c1 INTEGER, c2 INTEGER, x REAL, v INTEGER);
CREATE TABLE d(k INTEGER PRIMARY KEY, g TEXT, h INTEGER, p INTEGER);
CREATE TABLE dr(k REAL, g TEXT);
CREATE TABLE dn(k INTEGER, g TEXT);
CREATE TABLE dd(k INTEGER, g TEXT, u);
CREATE TABLE dt(k TEXT COLLATE NOCASE, g TEXT);
CREATE TABLE dtn(k TEXT COLLATE NOCASE, g TEXT);
CREATE TABLE du(tk TEXT COLLATE NOCASE, g TEXT);
CREATE TABLE ds(k TEXT, g TEXT);
CREATE TABLE dc(c1 INTEGER, c2 INTEGER, g TEXT);
CREATE TABLE p(p INTEGER PRIMARY KEY, pg TEXT);
CREATE TABLE dx(k REAL, g TEXT);
"""


def host_cache_cases(rep):
    """Issue 38 §2's contract on the host cache's star join: each rule a
    case, answered from the cache (last_scan.path 'cache') or declined with
    its reason, and always equal to SQLite's answer."""
    con, path = fresh("hostcache", HOST_CACHE_DDL)
    con.execute("BEGIN")
    for i in range(200):
        con.execute("INSERT INTO f VALUES(?,?,?,?,?,?,?,?)",
                    (i % 13 if i % 11 else None, [5, "5", 7][i % 3], ["a", "A", "b"][i % 3], [1.0, 2.5, 3][i % 3],
                     i % 4, i % 3, i * 0.25, i))
    for k in range(12):
        con.execute("INSERT INTO d VALUES(?,?,?,?)", (k, "g%d" % (k % 3), k % 5, k % 4))
        con.execute("INSERT INTO dr VALUES(?,?)", (float(k), "r%d" % (k % 2)))
        con.execute("INSERT INTO dn VALUES(?,?)", (None if k % 4 == 0 else k, "n%d" % (k % 2)))
        con.execute("INSERT INTO dd VALUES(?,?,?)", (k // 2, "d%d" % k, [1.0, 1, 2][k % 3]))
        con.execute("INSERT INTO dc VALUES(?,?,?)", (k % 4, k // 4, "c%d" % k))
    for k, v in (("a", "x"), ("B", "y")):
        con.execute("INSERT INTO dt VALUES(?,?)", (k, v))
    for k, v in (("a", "lower"), ("A", "upper"), ("b ", "b-space")):
        con.execute("INSERT INTO dtn VALUES(?,?)", (k, v))
        con.execute("INSERT INTO du VALUES(?,?)", (k, v))
    for k, v in (("5", "five"), ("05", "oh-five"), ("7", "seven")):
        con.execute("INSERT INTO ds VALUES(?,?)", (k, v))
    for k in range(4):
        con.execute("INSERT INTO p VALUES(?,?)", (k, "pg%d" % (k % 2)))
    con.execute("INSERT INTO dx VALUES(1.5, 'half'), (2.0, 'two')")
    con.execute("COMMIT")
    con.execute("SELECT gpuagg_config('device', 'cpu')")
    for t, cols in (("f", "k, nk, tk, rk, c1, c2, x, v"), ("d", "k, g, h, p"), ("dr", "k, g"), ("dn", "k, g"),
                    ("dd", "k, g, u"), ("dt", "k, g"), ("dtn", "k, g"), ("du", "tk, g"), ("ds", "k, g"),
                    ("dc", "c1, c2, g"), ("p", "p, pg"),
                    ("dx", "k, g")):
        con.execute("SELECT gpu_cache(?, ?)", (t, cols)).fetchall()

    def case(name, text, answered, why=None, params=()):
        want = run(con, gpu_text(text), params)
        for th in (1, 2):
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = via_gpu_query(con, text, params)
            ls = last_scan(con)
            w = str(ls.get("why"))
            ok = same(got, want, "ORDER BY" in text) and want[0] == "ok" and \
                (ls.get("path") == "cache") == answered and (why is None or why in w)
            rep.check("host_cache_%s_t%d" % (name, th), ok, "path %s (%s): got %s want %s; %s"
                      % (ls.get("path"), w, show(got), show(want), text))
    case("star", "SELECT d.g, sum(f.v), count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.g", True,
         "host cache: star join, fact f")
    case("count_only", "SELECT count(*) FROM f JOIN d ON f.k = d.k", True)
    case("parameter", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k WHERE f.v > ?1 AND d.h < 3 "
         "GROUP BY d.g", True, params=(120,))
    case("where_filters", "SELECT d.h, total(f.x) FROM f, d WHERE f.k = d.k AND d.g <> 'g1' AND f.v > 20 "
         "GROUP BY d.h", True)
    # REAL 1.0 matches INTEGER 1, and 1.0 = 1 either way round
    case("real_key", "SELECT dr.g, count(*), sum(f.v) FROM f JOIN dr ON dr.k = f.k GROUP BY dr.g", True)
    case("real_fact_key", "SELECT d.g, count(*) FROM f JOIN d ON f.rk = d.k GROUP BY d.g", True)
    # NULL keys never match
    case("null_keys", "SELECT dn.g, count(*) FROM f JOIN dn ON f.k = dn.k GROUP BY dn.g", True)
    # LEFT JOIN: unmatched rows keep NULLs; a WHERE term on the dimension after the probe
    case("left", "SELECT dn.g, count(*), sum(f.v) FROM f LEFT JOIN dn ON f.k = dn.k GROUP BY dn.g", True)
    case("left_where_null", "SELECT count(*), sum(f.v) FROM f LEFT JOIN dn ON f.k = dn.k WHERE dn.g IS NULL", True)
    case("left_on_filter", "SELECT dn.g, count(*) FROM f LEFT JOIN dn ON f.k = dn.k AND dn.g = 'n1' GROUP BY dn.g",
         True)
    case("using", "SELECT g, count(*) FROM f JOIN d USING (k) GROUP BY g", True)
    # a composite key, and a snowflake
    case("composite", "SELECT dc.g, sum(f.v) FROM f JOIN dc ON f.c1 = dc.c1 AND f.c2 = dc.c2 GROUP BY dc.g",
         True)
    case("snowflake", "SELECT p.pg, sum(f.v) FROM f JOIN d ON f.k = d.k JOIN p ON d.p = p.p GROUP BY p.pg",
         True)
    # one dimension joined twice (two names, two lookups)
    case("dimension_twice", "SELECT d1.g, d2.g, count(*), sum(f.v) FROM f JOIN d AS d1 ON f.k = d1.k "
         "JOIN d AS d2 ON f.c1 = d2.k GROUP BY 1, 2", True)
    # several rows of one key in one dimension: a fact row joins each, in the dimension's
    # rowid order (a group's first row: the fact's rowid, then the dimension's); 1 and 1.0
    # in one group keep the first row's type
    case("duplicate", "SELECT dd.g, count(*) FROM f JOIN dd ON f.k = dd.k GROUP BY dd.g", True)
    case("duplicate_first_row", "SELECT dd.u, typeof(dd.u), count(*), sum(f.v) FROM f JOIN dd ON f.k = dd.k "
         "GROUP BY dd.u", True)
    case("duplicate_left", "SELECT dd.g, count(*) FROM f LEFT JOIN dd ON f.c1 = dd.k GROUP BY dd.g", True)
    # in two dimensions, or in one that another joins: declined, naming the key
    case("duplicate_twice", "SELECT dd.g, d2.g, count(*) FROM f JOIN dd ON f.k = dd.k JOIN dd AS d2 "
         "ON f.c1 = d2.k GROUP BY 1, 2", False, "has two rows of key")
    case("duplicate_snowflake", "SELECT dd.g, p.pg, count(*) FROM f JOIN dd ON f.k = dd.k JOIN p "
         "ON dd.k = p.p GROUP BY 1, 2", False, "dd has two rows of key")
    # a REAL key that is no integer: declined
    case("real_fraction", "SELECT dx.g, count(*) FROM f JOIN dx ON f.rk = dx.k GROUP BY dx.g", False,
         "is a REAL that is no integer")
    # collation follows the operand order: f.tk = dt.k BINARY, dt.k = f.tk NOCASE (the
    # left column's), USING its left table's; 'a' and 'A' are one key under NOCASE (two
    # rows of one key: declined) and two under BINARY
    case("text_binary", "SELECT dt.g, count(*) FROM f JOIN dt ON f.tk = dt.k GROUP BY dt.g", True)
    case("text_nocase", "SELECT dt.g, count(*) FROM f JOIN dt ON dt.k = f.tk GROUP BY dt.g", True)
    case("text_using_binary", "SELECT du.g, count(*) FROM f JOIN du USING (tk) GROUP BY du.g", True)
    case("text_binary_two_keys", "SELECT dtn.g, count(*) FROM f JOIN dtn ON f.tk = dtn.k GROUP BY dtn.g",
         True)
    case("text_nocase_duplicate", "SELECT dtn.g, count(*) FROM f JOIN dtn ON dtn.k = f.tk GROUP BY dtn.g",
         True)
    case("text_left_nocase", "SELECT dtn.g, count(*) FROM f LEFT JOIN dt ON dt.k = f.tk "
         "LEFT JOIN dtn ON f.tk = dtn.k GROUP BY dtn.g", True)
    # an INTEGER fact key joins TEXT '5' and '05' (numeric affinity), an untyped fact
    # key holding 5 and '5': affinity decides, the host cache declines, the workers answer
    case("text_affinity", "SELECT ds.g, count(*) FROM f JOIN ds ON f.k = ds.k GROUP BY ds.g", False,
         "holds TEXT")
    case("untyped_text", "SELECT ds.g, count(*) FROM f JOIN ds ON f.nk = ds.k GROUP BY ds.g", False,
         "holds TEXT")
    # a column no entry holds
    case("uncached", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k JOIN dn ON f.c1 = dn.k "
         "GROUP BY d.g", True)
    # group_bytes caps the lookups and the joined rows
    con.execute("SELECT gpuagg_config('group_bytes', 64)")
    case("group_bytes", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.g", False,
         "more than group_bytes")
    con.execute("SELECT gpuagg_config('group_bytes', 0)")
    # a dimension changed since its load: its entry is stale
    con.execute("UPDATE d SET g = 'changed' WHERE k = 3")
    case("stale_dimension", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.g", False,
         "is stale")
    con.close()


# ------------------------------------------------- issue 38's review (joinfix)

REVIEW_DDL = [
    "CREATE TABLE f(dk INTEGER, v INTEGER, wk TEXT)",
    "CREATE TABLE d(k INTEGER, name TEXT, val, nn INTEGER NOT NULL, w REAL)",
    "CREATE TABLE dw(k INTEGER, %s)" % ", ".join("c%d" % i for i in range(60)),
    "CREATE TABLE w(k TEXT PRIMARY KEY, q INTEGER) WITHOUT ROWID",
    "CREATE TABLE ip(k INTEGER PRIMARY KEY, g TEXT)",
    "CREATE TABLE one(k INTEGER)",
]


def review_paths(rep, name, con, path, text, expect=None, partial=True, ordered=False, why=None):
    """text on every path: serial (in a transaction), parallel at threads 2
    and 4 with tiny pieces, and (partial) a partial of the file, merged and
    finished on a database that declares the tables; why: what the
    parallel runs' last_scan.why holds (the HAVING terms moved)."""
    want = run(con, gpu_text(text))
    problems = []
    if expect is not None and want != ("ok", expect) and not (
            want[0] == "ok" and sorted(want[1], key=repr) == sorted(expect, key=repr)):
        problems.append("the reference gives %s, the case expects %r" % (show(want), expect))
    con.execute("BEGIN")
    got = via_gpu_query(con, text)
    ls = last_scan(con)
    con.execute("COMMIT")
    if not same(got, want, ordered) or (got[0] == "ok" and ls.get("path") != "serial"):
        problems.append("serial (path %s): got %s" % (ls.get("path"), show(got)))
    os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "3"
    try:
        for th in (2, 4):
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = via_gpu_query(con, text)
            ls = last_scan(con)
            if not same(got, want, ordered) or (got[0] == "ok" and ls.get("path") != "parallel") or (
                    why and why not in str(ls.get("why"))):
                problems.append("threads %d (path %s, %s): got %s" % (th, ls.get("path"), ls.get("why"),
                                                                       show(got)))
    finally:
        del os.environ["GPUAGG_SCAN_PIECE_ROWS"]
    if partial:
        ro = connect(path, ro=True)
        m = sqlite3.connect(":memory:", isolation_level=None)
        m.enable_load_extension(True)
        m.load_extension(LIB)
        try:
            ro.execute("SELECT gpuagg_config('threads', 2)")
            blob = ro.execute("SELECT gpu_query_merge(gpu_query_partial(?))", (text,)).fetchone()[0]
            for ddl in REVIEW_DDL:
                m.execute(ddl)
            m.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % sql_lit(text))
            got = ("ok", m.execute("SELECT * FROM temp.q WHERE gpuagg_partial = ?", (blob,)).fetchall())
        except sqlite3.Error as e:
            got = ("error", str(e))
        finally:
            m.close()
            ro.close()
        if not same(got, want, ordered):
            problems.append("partial: got %s" % show(got))
    rep.check(name, not problems, "%s\n  want %s\n  %s" % (text, show(want), "\n  ".join(problems)))


def review_cases(rep):
    """Issue 38's review: HAVING's IS NULL on a dimension's column (read on
    its own table; nullable under LEFT JOIN), HAVING terms on dimension
    group terms that SQLite moves into WHERE, a bare rowid where one table
    has a rowid, and d.w where a table is named w (planner/path.c rule 5)."""
    path = os.path.join(TMP, "review.db")
    con = sqlite3.connect(path, isolation_level=None)
    for ddl in REVIEW_DDL:
        con.execute(ddl)
    con.execute("BEGIN")
    con.executemany("INSERT INTO f VALUES(?, ?, ?)", [(i % 4, i, "x%d" % (i % 3)) for i in range(1, 200)])
    con.executemany("INSERT INTO d VALUES(?, ?, ?, ?, ?)",
                    [(0, "a", 1, 1, 1.5), (1, "b", 1.0, 2, 2.5), (2, None, 2, 3, None)])
    con.execute("INSERT INTO dw(k, c59, c30) VALUES (0, 'a', 1), (1, 'b', NULL), (2, NULL, 2)")
    con.executemany("INSERT INTO w VALUES(?, ?)", [("x0", 1), ("x1", 2), ("x2", 3)])
    con.executemany("INSERT INTO ip VALUES(?, ?)", [(0, "p"), (1, "q"), (2, "r")])
    con.execute("COMMIT")
    con.close()
    con = connect(path)
    H = "/* gpuagg_fact(f) */ "
    # 1. IS NULL on a dimension's column far past the fact's columns (an
    # out-of-bounds read of the fact's names before); NOT NULL under LEFT
    # JOIN is NULL for the unmatched rows (SQLite's EP_CanBeNull: no
    # folding, so SQLite moves the term into WHERE, as last_scan says)
    for col, exp in (("c59", [("a", 49), ("b", 50)]), ("c30", [(1, 49), (2, 50)])):
        review_paths(rep, "review_isnull_dim_%s" % col, con, path,
                     H + "SELECT dw.%s, count(*) FROM f JOIN dw ON f.dk = dw.k GROUP BY dw.%s "
                     "HAVING dw.%s IS NOT NULL AND dw.%s NOTNULL" % (col, col, col, col), exp,
                     why="HAVING to WHERE: 2 conditions")
        review_paths(rep, "review_isnull_dim_%s_both" % col, con, path,
                     H + "SELECT dw.%s, count(*) FROM f JOIN dw ON f.dk = dw.k GROUP BY dw.%s "
                     "HAVING dw.%s IS NOT NULL AND dw.%s ISNULL" % (col, col, col, col), [])
    review_paths(rep, "review_isnull_left_notnull_col", con, path,
                 H + "SELECT d.nn, count(*) FROM f LEFT JOIN d ON f.dk = d.k GROUP BY d.nn HAVING d.nn IS NULL",
                 [(None, 50)], why="HAVING to WHERE: 1 condition")
    review_paths(rep, "review_notnull_left_notnull_col", con, path,
                 H + "SELECT d.nn, count(*) FROM f LEFT JOIN d ON f.dk = d.k GROUP BY d.nn HAVING d.nn NOTNULL",
                 [(1, 49), (2, 50), (3, 50)], why="HAVING to WHERE: 1 condition")
    review_paths(rep, "review_isnull_inner_notnull_col", con, path,
                 H + "SELECT d.nn, count(*) FROM f JOIN d ON f.dk = d.k GROUP BY d.nn HAVING d.nn ISNULL", [])
    review_paths(rep, "review_isnull_left_ipk", con, path,
                 H + "SELECT ip.k, count(*) FROM f LEFT JOIN ip ON f.dk = ip.k GROUP BY ip.k HAVING ip.k ISNULL",
                 [(None, 50)], why="HAVING to WHERE: 1 condition")
    # a NOT NULL column, a dimension's INTEGER PRIMARY KEY or rowid, of an
    # inner join: SQLite makes x ISNULL FALSE, which stays in HAVING
    con.execute("SELECT gpuagg_config('threads', 2)")
    for k, text in enumerate((
            "SELECT d.nn, count(*) FROM f JOIN d ON f.dk = d.k GROUP BY d.nn HAVING d.nn ISNULL",
            "SELECT ip.k, count(*) FROM f JOIN ip ON f.dk = ip.k GROUP BY ip.k HAVING ip.k IS NULL",
            "SELECT ip.rowid, count(*) FROM f JOIN ip ON f.dk = ip.k GROUP BY ip.rowid HAVING ip.rowid ISNULL")):
        got = via_gpu_query(con, H + text)
        ls = last_scan(con)
        rep.check("review_isnull_folded_%d" % k, got == ("ok", []) and ls.get("path") == "parallel" and
                  "HAVING to WHERE" not in str(ls.get("why")), "%s %r" % (show(got), ls.get("why")))
    # 2. a dimension's group term is BINARY: SQLite moves its HAVING terms
    # into WHERE, so they see each row's 1 or 1.0
    review_paths(rep, "review_having_moved_typeof", con, path,
                 H + "SELECT d.val, count(*) FROM f JOIN d ON f.dk = d.k GROUP BY d.val "
                 "HAVING typeof(d.val) = 'integer'", [(1, 49), (2, 50)])
    review_paths(rep, "review_having_moved_typeof_real", con, path,
                 H + "SELECT d.val, count(*) FROM f JOIN d ON f.dk = d.k GROUP BY d.val "
                 "HAVING typeof(d.val) = 'real'", [(1, 50)])
    review_paths(rep, "review_having_moved_overflow", con, path,
                 H + "SELECT d.val, count(*), sum(f.v) FROM f JOIN d ON f.dk = d.k GROUP BY d.val "
                 "HAVING d.val * 9223372036854775807 = 9223372036854775807")
    # 3. a bare rowid: the rowid of the one table that has one
    for k, text in enumerate((
            "SELECT rowid % 2 AS p, count(*) FROM f JOIN w ON f.wk = w.k GROUP BY p",
            "SELECT oid / 50 AS b, sum(v) FROM f JOIN w ON f.wk = w.k GROUP BY b ORDER BY b",
            "SELECT w.q, sum(_rowid_), max(ROWID) FROM f, w WHERE w.k = f.wk GROUP BY w.q",
            "SELECT rowid % 3, count(*) FROM f LEFT JOIN w ON f.wk = w.k GROUP BY rowid % 3")):
        review_paths(rep, "review_bare_rowid_%d" % k, con, path, H + text, ordered="ORDER BY" in text)
    got = via_gpu_query(con, "SELECT rowid, count(*) FROM f JOIN d ON f.dk = d.k GROUP BY rowid")
    rep.check("review_bare_rowid_two_tables", got == ("error", "no such column: rowid") or
              got == ("error", "gpu_query: no such column: rowid"), show(got))
    # 4. d.w is d's column, not the table w: parallel; a table the text
    # names still sends it to the serial path
    review_paths(rep, "review_dim_column_named_table", con, path,
                 H + "SELECT d.name, count(*), sum(d.w), max(\"d\".\"w\") FROM f JOIN d ON f.dk = d.k "
                 "GROUP BY d.name")
    con.execute("SELECT gpuagg_config('threads', 2)")
    got = via_gpu_query(con, "SELECT count(*) FROM f WHERE f.dk IN one")
    ls = last_scan(con)
    rep.check("review_table_still_serial", got[0] == "ok" and ls.get("path") == "serial" and
              ls.get("why") == "the text names another table: one", "%s %r" % (show(got), ls.get("why")))
    con.close()


WRITER = r"""
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
end = time.time() + float(sys.argv[2])
v = 1
while time.time() < end:
    v += 1
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE d SET w = ?", (v,))
    con.execute("UPDATE f SET v = ?, x = x + 1 WHERE rowid % 7 = ?", (v, v % 7))
    con.execute("UPDATE f SET v = ?", (v,))
    con.execute("COMMIT")
print(v)
"""


def writer_case(rep):
    """A writer commits, in each transaction, one version number into every
    row of the dimension and of the fact: every answer's min and max of
    both must be one number (one committed state)."""
    for mode in ("wal", "delete"):
        con, path = fresh("writer_" + mode, """
            CREATE TABLE d(k INTEGER PRIMARY KEY, w INTEGER, g TEXT);
            CREATE TABLE f(k INTEGER, v INTEGER, x REAL);
            INSERT INTO d SELECT value, 1, 'g' || (value % 3) FROM json_each('[0,1,2,3,4,5,6,7]');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            INSERT INTO f SELECT i % 8, 1, i * 0.5 FROM n;""", mode)
        con.execute("PRAGMA busy_timeout = 30000")
        con.execute("SELECT gpuagg_config('threads', 4)")
        os.environ["GPUAGG_SCAN_PIECE_ROWS"] = "500"
        text = ("SELECT d.g, min(d.w), max(d.w), min(f.v), max(f.v), count(*) FROM f JOIN d ON f.k = d.k "
                "GROUP BY d.g")
        p = subprocess.Popen([sys.executable, "-c", WRITER, path, "3"], stdout=subprocess.PIPE)
        bad, runs, par, versions, probed = [], 0, 0, set(), 0
        t_end = time.time() + 3
        while time.time() < t_end:
            got = via_gpu_query(con, text)
            runs += 1
            ls = last_scan(con)
            par += ls.get("path") == "parallel"
            probed += bool(((ls.get("join") or {}).get("probe") or {}).get("used"))
            if got[0] != "ok":
                bad.append(got[1])
                continue
            vs = {v for row in got[1] for v in row[1:5]}
            counts = [row[5] for row in got[1]]
            versions |= vs
            if len(vs) != 1 or sum(counts) != 20000:
                bad.append(repr(got[1]))
        out = p.communicate()[0]
        # the caller's progress handler stops a join's scan as it stops
        # SQLite's own statement (planner/path.c rule 12)
        con.set_progress_handler(lambda: 1, 1000)
        got = via_gpu_query(con, text)
        ls = last_scan(con)
        con.set_progress_handler(lambda: int(DEADLINE[0] and time.time() > DEADLINE[0]), 100000)
        rep.check("progress_handler_stops_join_" + mode, got == ("error", "interrupted"),
                  "%r %r" % (got, ls.get("path")))
        os.environ.pop("GPUAGG_SCAN_PIECE_ROWS", None)
        # the dimension built in the workers' snapshot (engine/scan/dims.h
        # rule 1): d.w read back from the build, f.v by the workers
        rep.check("writer_one_state_" + mode, not bad and runs >= 3 and par >= 1 and p.returncode == 0 and
                  len(versions) >= 2 and probed >= 1,
                  "%d runs (%d parallel, %d probed), writer reached %s, versions seen %d; bad: %s"
                  % (runs, par, probed, out.strip(), len(versions), bad[:3]))


def precedence_cases(rep):
    """Session 4's review: OR binds looser than AND, so `a AND b OR c` is
    one condition, never cut at its AND (planner/qtok.c ga_qt_top_or, used
    by qdims.c's conds and cache_join.c's split: the probe path and the host
    cache had answered `(a) AND (b OR c)`); and `1 + d.k` is no bare
    column (qdims.c bare: it had probed on d.k).  Each text equals SQLite
    on the workers and from the host cache, or is refused as a whole."""
    con = connect(os.path.join(TMP, "prec.db"))
    con.executescript("""
CREATE TABLE d(k INTEGER PRIMARY KEY, h INTEGER);
CREATE TABLE f(k INTEGER, a INTEGER, b INTEGER, c INTEGER, x REAL);""")
    con.execute("BEGIN")  # one transaction: 3,000 commits took 20 s of make test
    con.executemany("INSERT INTO d VALUES (?,?)", [(i, i % 3) for i in range(10)])
    con.executemany("INSERT INTO f VALUES (?,?,?,?,?)", [(i % 10, i % 2, i % 3, i % 5, i * 0.5)
                                                         for i in range(3000)])
    con.execute("COMMIT")
    # keys INT64_MIN and INT64_MAX: the host cache's lookup span wraps to 0
    # (engine/cache/cache_star.c: it had failed with out of memory)
    con.executescript("""
CREATE TABLE e(k INTEGER PRIMARY KEY, h INTEGER);
CREATE TABLE g(k INTEGER, x REAL);
INSERT INTO e VALUES (-9223372036854775808, 1), (9223372036854775807, 2), (0, 3);""")
    con.execute("BEGIN")
    con.executemany("INSERT INTO g VALUES (?, ?)", [([-2 ** 63, 2 ** 63 - 1, 0, 5][i % 4], i * 0.25)
                                                   for i in range(400)])
    con.execute("COMMIT")
    texts = [
        "SELECT d.h, count(*), sum(f.x) FROM f JOIN d ON f.k = d.k WHERE f.a = 1 AND f.b = 2 OR f.c = 3 "
        "GROUP BY d.h",
        "SELECT d.h, count(*) FROM f JOIN d ON f.k = d.k WHERE d.h = 1 AND f.b = 2 OR f.c = 3 GROUP BY d.h",
        "SELECT d.h, count(*) FROM f, d WHERE f.k = d.k AND f.a = 1 OR f.c = 3 AND f.k = d.k GROUP BY d.h",
        "SELECT d.h, count(*) FROM f JOIN d ON f.k = d.k WHERE CASE WHEN f.a = 1 OR f.b = 2 THEN 1 END "
        "AND f.c = 3 GROUP BY d.h",
        "SELECT d.h, count(*) FROM f JOIN d ON f.k = 1 + d.k GROUP BY d.h",
        "SELECT d.h, count(*) FROM f JOIN d ON f.k = 'x' || d.k GROUP BY d.h",
        "SELECT e.h, count(*), sum(g.x) FROM g JOIN e ON g.k = e.k GROUP BY e.h",
    ]
    for cache in (False, True):
        if cache:
            con.execute("SELECT gpuagg_config('device', 'cpu')")
            con.execute("SELECT gpu_cache('f', 'k, a, b, c, x')")
            con.execute("SELECT gpu_cache('d', 'k, h')")
            con.execute("SELECT gpu_cache('e', 'k, h')")
            con.execute("SELECT gpu_cache('g', 'k, x')")
        for th in (2, 4):
            con.execute("SELECT gpuagg_config('threads', ?)", (th,))
            for text in texts:
                want = run(con, gpu_text(text))
                got = via_gpu_query(con, text)
                ls = last_scan(con)
                rep.check("join_precedence_%s_t%d_%d" % ("cache" if cache else "scan", th, texts.index(text)),
                          (same(got, want, False) or (got[0] == "error" and "gpu_query:" in got[1]))
                          and not (cache and text.startswith("SELECT e.h") and ls.get("path") != "cache"),
                          "%s\n got %r (path %s, %s)\n want %r" % (text, got, ls.get("path"), ls.get("why"),
                                                                     want))
    con.close()



# ------------------------------------------------ the GPU cache (§3.3)
#
# Under GPUAGG_TEST_GPU=1 (the fake GPU of fake:query_join, or a real one
# under make test-gpu): the fact table in a GPU entry, its dimensions in GPU
# entries (copied back for the build) or, in odd worlds, in host entries;
# engine/cache/cache_gpu_star.c probes on the device.  JOIN_GPU_ONLY=1 runs
# only these (fake:query_join); GPU_QUERIES (default 400) the generator's.

GPU_QUERIES = int(os.environ.get("GPU_QUERIES", "400"))


def gpu_cache_con(path, dims_host, fact="f"):
    """A connection whose gpu_cache holds every column a load takes of
    every table: the fact's on the GPU, the dimensions' on the GPU or (dims_host)
    on the host."""
    con = connect(path)
    for (t,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' "
                            "AND name NOT LIKE 'sqlite%'").fetchall():
        con.execute("SELECT gpuagg_config('device', ?)", ("cpu" if dims_host and t != fact else "auto",))
        cols = [c[1] for c in con.execute("PRAGMA table_info(%s)" % t).fetchall()]
        good = []
        for c in cols:
            try:
                con.execute("SELECT gpu_cache(?, ?)", (t, c)).fetchall()
                good.append(c)
            except sqlite3.Error:
                pass
        if good:
            try:
                con.execute("SELECT gpu_cache(?, ?)", (t, ", ".join(good))).fetchall()
            except sqlite3.Error:
                pass
    con.execute("SELECT gpuagg_config('device', 'auto')")
    return con


def gpu_entries(con):
    info = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])
    return {str(e.get("table")).split(".")[-1]: e.get("where") for e in (info.get("cache") or {}).get("entries", [])}


def gpu_join_queries(rep):
    """The join generator's worlds and texts (join_queries'), each answered
    with the fact in a GPU entry: equal to the reference whether the GPU
    cache answers (last_scan.why 'GPU cache: star join') or declines."""
    r = random.Random(SEED)
    worlds = [World(w, r) for w in range(WORLDS)]
    stats = Counter()
    fails = 0
    for wd in worlds:
        wd.gcon = gpu_cache_con(wd.path, wd.w % 2 == 1)
        if gpu_entries(wd.gcon).get("f") != "gpu":
            rep.check("gpu_join_world%d" % wd.w, False, "f is not in a GPU entry: %r" % gpu_entries(wd.gcon))
            return
    for qi in range(GPU_QUERIES):
        wd = worlds[qi % len(worlds)]
        qr = random.Random(SEED * 7919 + qi)
        q = JoinQuery(qr, wd, hint=qi % 3 == 0)
        want = run(wd.con, gpu_text(q.text))
        if want[0] != "ok":
            continue
        got = via_gpu_query(wd.gcon, q.text)
        ls = last_scan(wd.gcon)
        why = str(ls.get("why"))
        problems = []
        if not same(got, want, q.ordered):
            problems.append("GPU cache (path %s, %s): got %s" % (ls.get("path"), why, show(got)))
        if ls.get("path") == "cache":
            stats["answered"] += 1
            stats["answered_dims_host"] += wd.w % 2
            stats["answered_snowflake"] += any(d.parent for d in wd.dims)
            stats["answered_left"] += bool(q.left)
            if not why.startswith("GPU cache: star join, fact f:"):
                problems.append("GPU cache: why %r" % why)
        else:
            m = re.search(r"cache not used: the text joins \d+ tables(?: \(fact \w+\))?: ([^;(:0-9]*)", why)
            stats["declined: " + (m.group(1).strip() if m else why[:50])] += 1
        fails += bool(problems)
        rep.check("gpu_join_q%d" % qi, not problems,
                  "SEED=%d query %d on world %d (dims %s, dims on the host %s)\n  text: %s\n  want %s\n  %s"
                  % (SEED, qi, wd.w, [(d.name, d.kind, d.parent) for d in wd.dims], wd.w % 2 == 1, q.text,
                     show(want), "\n  ".join(problems)) if fails <= 20 else q.text[:200])
    for wd in worlds:
        wd.gcon.close()
    print("# joins from the GPU cache: %d of %d answered (%d with host dimensions, %d over snowflakes, "
          "%d with LEFT JOIN); declined: %s"
          % (stats["answered"], GPU_QUERIES, stats["answered_dims_host"], stats["answered_snowflake"],
             stats["answered_left"], "; ".join("%s %d" % (k[10:], v) for k, v in sorted(stats.items())
                                                if k.startswith("declined: "))))
    rep.check("gpu_join_answered", stats["answered"] >= GPU_QUERIES // 8 and stats["answered_dims_host"] >= 1
              and stats["answered_snowflake"] >= 1 and stats["answered_left"] >= 1,
              "only %s answered from the GPU cache" % dict(stats))


def gpu_cache_cases(rep):
    """Issue 38 §2's contract on the GPU cache's star join (the host
    cache's cases, host_cache_cases): answered from the GPU (last_scan
    'GPU cache: star join') or declined with its reason, always equal to
    SQLite's answer."""
    con, path = fresh("gpucache", HOST_CACHE_DDL)
    con.execute("BEGIN")
    for i in range(300):
        con.execute("INSERT INTO f VALUES(?,?,?,?,?,?,?,?)",
                    (i % 13 if i % 11 else None, [5, "5", 7][i % 3], ["a", "A", "b", None][i % 4],
                     [1.0, 2.5, 3, None][i % 4], i % 4, i % 3, i * 0.25, i))
    for k in range(12):
        con.execute("INSERT INTO d VALUES(?,?,?,?)", (k, "g%d" % (k % 3), k % 5, k % 4))
        con.execute("INSERT INTO dr VALUES(?,?)", (float(k), "r%d" % (k % 2)))
        con.execute("INSERT INTO dn VALUES(?,?)", (None if k % 4 == 0 else k, "n%d" % (k % 2)))
        con.execute("INSERT INTO dd VALUES(?,?,?)", (k // 2, "d%d" % k, [1.0, 1, 2][k % 3]))
        con.execute("INSERT INTO dc VALUES(?,?,?)", (k % 4, k // 4, "c%d" % k))
    for k, v in (("a", "x"), ("B", "y")):
        con.execute("INSERT INTO dt VALUES(?,?)", (k, v))
    for k, v in (("a", "lower"), ("A", "upper"), ("b ", "b-space")):
        con.execute("INSERT INTO dtn VALUES(?,?)", (k, v))
        con.execute("INSERT INTO du VALUES(?,?)", (k, v))
    for k, v in (("5", "five"), ("05", "oh-five"), ("7", "seven")):
        con.execute("INSERT INTO ds VALUES(?,?)", (k, v))
    for k in range(4):
        con.execute("INSERT INTO p VALUES(?,?)", (k, "pg%d" % (k % 2)))
    con.execute("INSERT INTO dx VALUES(1.5, 'half'), (2.0, 'two')")
    # a third level below p (a snowflake f -> d -> p -> pq): only 'pg0' joins
    con.execute("CREATE TABLE pq(pg TEXT, z INTEGER)")
    con.execute("INSERT INTO pq VALUES('pg0', 7)")
    con.execute("COMMIT")
    con.close()
    for dims_host in (False, True):
        con = gpu_cache_con(path, dims_host)
        tag = "host_dims" if dims_host else "gpu_dims"
        if gpu_entries(con).get("f") != "gpu":
            rep.check("gpu_cache_%s" % tag, False, "f is not in a GPU entry")
            continue

        def case(name, text, answered, why=None, params=()):
            want = run(con, gpu_text(text), params)
            got = via_gpu_query(con, text, params)
            ls = last_scan(con)
            w = str(ls.get("why"))
            ok = same(got, want, "ORDER BY" in text) and want[0] == "ok" and \
                (ls.get("path") == "cache") == answered and (why is None or why in w)
            rep.check("gpu_cache_%s_%s" % (tag, name), ok, "path %s (%s): got %s want %s; %s"
                      % (ls.get("path"), w, show(got), show(want), text))
        case("star", "SELECT d.g, sum(f.v), count(*), avg(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.g", True,
             "GPU cache: star join, fact f: 300 rows probed")
        case("count_only", "SELECT count(*) FROM f JOIN d ON f.k = d.k", True)
        case("ungrouped", "SELECT sum(f.v), total(f.x), min(f.x), max(d.h) FROM f JOIN d ON f.k = d.k", True)
        case("parameter", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k WHERE f.v > ?1 AND d.h < 3 "
             "GROUP BY d.g", True, params=(120,))
        case("where_filters", "SELECT d.h, total(f.x) FROM f, d WHERE f.k = d.k AND d.g <> 'g1' AND f.v > 20 "
             "GROUP BY d.h", True)
        case("expression", "SELECT d.h % 2, sum(f.v * d.h), max(f.x + d.p) FROM f JOIN d ON f.k = d.k "
             "WHERE f.v > 30 AND d.h + 1 > 1 GROUP BY 1", True)
        case("real_key", "SELECT dr.g, count(*), sum(f.v) FROM f JOIN dr ON dr.k = f.k GROUP BY dr.g", True)
        case("real_fact_key", "SELECT d.g, count(*) FROM f JOIN d ON f.rk = d.k GROUP BY d.g", True)
        case("null_keys", "SELECT dn.g, count(*) FROM f JOIN dn ON f.k = dn.k GROUP BY dn.g", True)
        case("left", "SELECT dn.g, count(*), sum(f.v) FROM f LEFT JOIN dn ON f.k = dn.k GROUP BY dn.g", True)
        case("left_where_null", "SELECT count(*), sum(f.v) FROM f LEFT JOIN dn ON f.k = dn.k "
             "WHERE dn.g IS NULL", True)
        case("left_on_filter", "SELECT dn.g, count(*) FROM f LEFT JOIN dn ON f.k = dn.k AND dn.g = 'n1' "
             "GROUP BY dn.g", True)
        case("using", "SELECT g, count(*) FROM f JOIN d USING (k) GROUP BY g", True)
        case("composite", "SELECT dc.g, sum(f.v) FROM f JOIN dc ON f.c1 = dc.c1 AND f.c2 = dc.c2 "
             "GROUP BY dc.g", True, "dc hash")
        case("snowflake", "SELECT p.pg, sum(f.v) FROM f JOIN d ON f.k = d.k JOIN p ON d.p = p.p "
             "GROUP BY p.pg", True)
        case("snowflake_left", "SELECT p.pg, count(*), sum(f.v) FROM f LEFT JOIN d ON f.k = d.k AND d.h < 3 "
             "JOIN p ON d.p = p.p AND p.pg = 'pg1' GROUP BY p.pg", True)
        # an inner join below a LEFT JOIN below the fact's dimension: a d row whose p
        # misses pq keeps p's NULLs, and pq's inner join then drops the fact row
        # (cache_gpu_star.c rule 2's -2), as SQLite's join order does
        case("snowflake_three_levels", "SELECT pq.z, d.g, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k "
             "LEFT JOIN p ON d.p = p.p JOIN pq ON p.pg = pq.pg GROUP BY 1, 2", True)
        case("snowflake_three_levels_left", "SELECT pq.z, d.g, count(*), sum(f.v) FROM f LEFT JOIN d "
             "ON f.k = d.k LEFT JOIN p ON d.p = p.p AND p.pg = 'pg1' JOIN pq ON p.pg = pq.pg GROUP BY 1, 2",
             True)
        case("dimension_twice", "SELECT d1.g, d2.g, count(*), sum(f.v) FROM f JOIN d AS d1 ON f.k = d1.k "
             "JOIN d AS d2 ON f.c1 = d2.k GROUP BY 1, 2 ORDER BY 1, 2", True)
        case("top_rows", "SELECT d.g, d.h, sum(f.v) AS s FROM f JOIN d ON f.k = d.k GROUP BY 1, 2 "
             "HAVING count(*) > 2 ORDER BY s DESC LIMIT 3", True)
        case("distinct", "SELECT d.g, count(DISTINCT f.c1), sum(DISTINCT f.v) FROM f JOIN d ON f.k = d.k "
             "GROUP BY d.g", True)
        # several rows of one key: the GPU's join keeps the fact's rows, declines
        case("duplicate", "SELECT dd.g, count(*) FROM f JOIN dd ON f.k = dd.k GROUP BY dd.g", False,
             "several rows of one key")
        case("real_fraction", "SELECT dx.g, count(*) FROM f JOIN dx ON f.rk = dx.k GROUP BY dx.g", False,
             "is a REAL that is no integer")
        # TEXT keys as dictionary codes, the collation as the operands are written
        case("text_binary", "SELECT dt.g, count(*) FROM f JOIN dt ON f.tk = dt.k GROUP BY dt.g", True)
        case("text_nocase", "SELECT dt.g, count(*) FROM f JOIN dt ON dt.k = f.tk GROUP BY dt.g", True)
        case("text_using_binary", "SELECT du.g, count(*) FROM f JOIN du USING (tk) GROUP BY du.g", True)
        case("text_binary_two_keys", "SELECT dtn.g, count(*) FROM f JOIN dtn ON f.tk = dtn.k GROUP BY dtn.g",
             True)
        case("text_nocase_duplicate", "SELECT dtn.g, count(*) FROM f JOIN dtn ON dtn.k = f.tk "
             "GROUP BY dtn.g", False, "several rows of one key")
        case("text_left_nocase", "SELECT dt.g, min(dt.g), count(*) FROM f LEFT JOIN dt ON dt.k = f.tk "
             "GROUP BY dt.g", True)
        case("text_affinity", "SELECT ds.g, count(*) FROM f JOIN ds ON f.k = ds.k GROUP BY ds.g", False,
             "holds TEXT")
        case("variance", "SELECT d.g, gpu_var_samp(f.v) FROM f JOIN d ON f.k = d.k GROUP BY d.g", False,
             "variance")
        con.execute("SELECT gpuagg_config('group_bytes', 2000)")
        case("group_bytes", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.g", False,
             "more than group_bytes")
        con.execute("SELECT gpuagg_config('group_bytes', 0)")
        # every build and the probe reported
        case("report", "SELECT d.g, p.pg, count(*) FROM f JOIN d ON f.k = d.k JOIN p ON d.p = p.p "
             "GROUP BY 1, 2", True, "; builds d 12 rows")
        # a dimension changed since its load: stale (another connection writes)
        w = connect(path)
        w.execute("UPDATE d SET g = 'changed' WHERE k = 3")
        w.close()
        case("stale_dimension", "SELECT d.g, count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.g", False,
             "is stale")
        con.close()
        c2 = connect(path)
        c2.execute("UPDATE d SET g = 'g0' WHERE k = 3")
        c2.close()


def gpu_ssb_cases(rep):
    """SSB at SF 0.01 (bench/ssb.py) from the GPU cache: every query
    answered from the GPU, equal to SQLite's."""
    if os.environ.get("SSB") == "0":
        rep.skip("gpu_ssb", "SSB=0")
        return
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import ssb  # bench/ssb.py
    path = os.path.join(TMP, "gssb.db")
    c = sqlite3.connect(path, isolation_level=None)
    ssb.fill(c, SSB_SF)
    c.close()
    con = connect(path)
    for dims_host in (False, True):
        g = connect(path)
        for t, cols in ssb.CACHE_COLUMNS.items():
            g.execute("SELECT gpuagg_config('device', ?)", ("cpu" if dims_host and t != "lineorder" else "auto",))
            g.execute("SELECT gpu_cache(?, ?)", (t, cols)).fetchall()
        g.execute("SELECT gpuagg_config('device', 'auto')")
        for name, text in ssb.QUERIES.items():
            want = run(con, gpu_text(text))
            got = via_gpu_query(g, text)
            ls = last_scan(g)
            ok = want[0] == "ok" and same(got, want, True) and ls.get("path") == "cache" and \
                str(ls.get("why")).startswith("GPU cache: star join, fact lineorder")
            rep.check("gpu_ssb_%s%s" % (name, "_host_dims" if dims_host else ""), ok,
                      "path %s (%s): got %s want %s" % (ls.get("path"), ls.get("why"), show(got), show(want)))
        g.close()


def gpu_writer_case(rep):
    """A writer commits one version number into every row of the
    dimension and of the fact while the GPU cache answers: the entries are
    reloaded between queries, and every answer (from the GPU, current for
    the caller, or from the workers after a change) is one committed
    state."""
    con, path = fresh("gpu_writer", """
        CREATE TABLE d(k INTEGER PRIMARY KEY, w INTEGER, g TEXT);
        CREATE TABLE f(k INTEGER, v INTEGER, x REAL);
        INSERT INTO d SELECT value, 1, 'g' || (value % 3) FROM json_each('[0,1,2,3,4,5,6,7]');
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
        INSERT INTO f SELECT i % 8, 1, i * 0.5 FROM n;""", "wal")
    con.execute("PRAGMA busy_timeout = 30000")
    text = ("SELECT d.g, min(d.w), max(d.w), min(f.v), max(f.v), count(*) FROM f JOIN d ON f.k = d.k "
            "GROUP BY d.g")
    p = subprocess.Popen([sys.executable, "-c", WRITER, path, "3"], stdout=subprocess.PIPE)
    bad, runs, gpu, versions = [], 0, 0, set()
    t_end = time.time() + 3
    while time.time() < t_end:
        try:
            con.execute("SELECT gpu_cache('d', 'k, w, g')").fetchall()
            con.execute("SELECT gpu_cache('f', 'k, v, x')").fetchall()
        except sqlite3.Error as e:  # a load that meets a commit each time: none cached
            if "changed during" not in str(e):
                bad.append("load: %s" % e)
        got = via_gpu_query(con, text)
        runs += 1
        ls = last_scan(con)
        gpu += str(ls.get("why")).startswith("GPU cache: star join")
        if got[0] != "ok":
            bad.append(got[1])
            continue
        vs = {v for row in got[1] for v in row[1:5]}
        versions |= vs
        if len(vs) != 1 or sum(row[5] for row in got[1]) != 20000:
            bad.append(repr(got[1]))
    out = p.communicate()[0]
    con.close()
    rep.check("gpu_writer_one_state", not bad and runs >= 3 and gpu >= 1 and p.returncode == 0,
              "%d runs (%d from the GPU cache), writer reached %s, versions seen %d; bad: %s"
              % (runs, gpu, out.strip(), len(versions), bad[:3]))

def main():
    rep = Reporter("query_join")
    try:
        c = sqlite3.connect(":memory:")
        c.enable_load_extension(True)
        c.load_extension(LIB)
        c.close()
    except (sqlite3.Error, AttributeError) as e:
        rep.skip("all", "cannot load the extension: %s" % e)
        rep.finish()
    if os.environ.get("JOIN_GPU_ONLY") == "1":  # fake:query_join (§3.3)
        gpu_cache_cases(rep)
        gpu_ssb_cases(rep)
        gpu_writer_case(rep)
        gpu_join_queries(rep)
        rep.finish()
    error_cases(rep)
    semantics_cases(rep)
    fact_cases(rep)
    serial_cases(rep)
    ssb_cases(rep)
    host_cache_cases(rep)
    writer_case(rep)
    review_cases(rep)
    precedence_cases(rep)
    join_queries(rep)
    partial_dims_queries(rep)
    if GPU:  # the GPU cache (§3.3): make test-gpu
        gpu_cache_cases(rep)
        gpu_ssb_cases(rep)
        gpu_writer_case(rep)
        gpu_join_queries(rep)
    rep.finish()


if __name__ == "__main__":
    main()
