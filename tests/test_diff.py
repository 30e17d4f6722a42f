"""test_diff.py — differential tests of gpu_* against SQLite's built-ins.

gpu_max/gpu_min must equal max()/min() in value AND type.  gpu_sum must equal
sum() where sum() is exact (integers without overflow) and the exact
reference (gatest.ref_*) everywhere.  Window frames: ROWS/RANGE/GROUPS,
sliding, UNBOUNDED FOLLOWING; for real data the frame's members are read
back with group_concat(id) OVER the same window and summed exactly.
A >= 3M-row table is generated with generate_series in the sqlite3 CLI.

Runs every check in each mode of gatest.MODES (default, forced GPU).
"""

import math
from fractions import Fraction
import os
import random
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import (Reporter, connect, mode_items, same, show, ref_sum, ref_total,  # noqa: E402
                    ref_avg, exact, round_fraction, first_extreme, INT64_MAX, INT64_MIN)

SEED = int(os.environ.get("SEED", "7"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
WIN_ROWS = 1000
BIG_ROWS = int(os.environ.get("GPUAGG_BIG_ROWS", "3000000"))


def run(con, sql, params=()):
    try:
        return con.execute(sql, params).fetchall()
    except Exception as e:  # noqa: BLE001
        return ("error", str(e))


def gen_value(r, kind):
    if kind == "int":
        return r.randint(-1000, 1000)
    if kind == "bigint":
        return r.randint(INT64_MIN // 2048, INT64_MAX // 2048)
    if kind == "real":
        return r.choice([r.uniform(-1e6, 1e6), r.uniform(-1, 1) * 10 ** r.randint(-300, 300),
                         float(r.randint(-50, 50))])
    if kind == "text":
        n = r.randint(0, 6)
        return "".join(r.choice("aAbBzZ09 é\u00ff\u0101\u4e2d\U0001f600\x00-") for _ in range(n))
    if kind == "blob":
        return bytes(r.getrandbits(8) for _ in range(r.randint(0, 5)))
    if kind == "numtext":
        return r.choice([str(r.randint(-99, 99)), "%d.5" % r.randint(-9, 9), "12abc", "x", " 7 "])
    raise ValueError(kind)


def make_data(r):
    """name -> list of (id, g, k, x) rows; g: a group of many, k: an order key with ties."""
    kinds = {
        "ints": ["int"], "bigints": ["bigint"], "reals": ["real"], "mixednum": ["int", "real", "bigint"],
        "texts": ["text"], "blobs": ["blob"], "everything": ["int", "real", "text", "blob", "numtext"],
        "numtext": ["numtext", "int"],
    }
    data = {}
    for name, ks in kinds.items():
        n = 6000
        rows = []
        for i in range(1, n + 1):
            x = None if r.random() < 0.1 else gen_value(r, r.choice(ks))
            rows.append((i, r.randint(0, 1499), r.randint(0, 400), x))
        data[name] = rows
    return data


def numeric(con, table):
    """Each row's value as sum() classifies it (sqlite3_value_numeric_type),
    read back through a one-row sum(): int or float, exactly."""
    return dict(con.execute("select id, sum(x) from %s group by id" % table).fetchall())


def check_aggregates(rep, con, tag, name, rows):
    t = name
    is_int = name in ("ints", "bigints")
    # one query, many aggregates, whole table
    q = ("select gpu_max(x), max(x), gpu_min(x), min(x), gpu_sum(x), gpu_total(x), gpu_avg(x), "
         "gpu_max(distinct x), gpu_min(distinct x) from %s" % t)
    got = run(con, q)
    if isinstance(got, tuple):
        rep.check("%s_%s_whole" % (tag, name), False, "error %r" % (got,))
        return
    gmax, bmax, gmin, bmin, gsum, gtot, gavg, gdmax, gdmin = got[0]
    rep.check("%s_%s_max" % (tag, name), same(gmax, bmax), "gpu_max %s max %s" % (show(gmax), show(bmax)))
    rep.check("%s_%s_min" % (tag, name), same(gmin, bmin), "gpu_min %s min %s" % (show(gmin), show(bmin)))
    # DISTINCT keeps the first of equal values (5 before 5.0), so
    # max(DISTINCT x) is max(x) in value AND type
    rep.check("%s_%s_max_distinct" % (tag, name), same(gdmax, bmax) and same(gdmin, bmin),
              "gpu_max(distinct) %s max %s, gpu_min(distinct) %s min %s"
              % (show(gdmax), show(bmax), show(gdmin), show(bmin)))
    b = run(con, "select max(distinct x), min(distinct x) from %s" % t)
    rep.check("%s_%s_distinct_builtin" % (tag, name), not isinstance(b, tuple)
              and same(gdmax, b[0][0]) and same(gdmin, b[0][1]),
              "gpu %s %s builtin %r" % (show(gdmax), show(gdmin), b))
    nums = numeric(con, t)
    vals = [nums[i] for i, _, _, x in rows if x is not None]
    for fn, g, ref in (("sum", gsum, ref_sum(vals)), ("total", gtot, ref_total(vals)), ("avg", gavg, ref_avg(vals))):
        rep.check("%s_%s_%s_exact" % (tag, name, fn), same(g, ref), "got %s ref %s" % (show(g), show(ref)))
    if is_int:
        b = run(con, "select sum(x), sum(distinct x) from %s" % t)
        gd = run(con, "select gpu_sum(distinct x) from %s" % t)
        rep.check("%s_%s_sum_builtin" % (tag, name), not isinstance(b, tuple) and same(gsum, b[0][0]),
                  "gpu %s builtin %r" % (show(gsum), b))
        rep.check("%s_%s_sum_distinct_builtin" % (tag, name), not isinstance(b, tuple) and
                  not isinstance(gd, tuple) and same(gd[0][0], b[0][1]), "%r %r" % (gd, b))
    # GROUP BY with ~1500 groups, several aggregates per query
    got = run(con, "select g, gpu_max(x), max(x), gpu_min(x), min(x), gpu_sum(x), gpu_total(x), gpu_avg(x) "
                   "from %s group by g" % t)
    if isinstance(got, tuple):
        rep.check("%s_%s_groupby" % (tag, name), False, "error %r" % (got,))
        return
    groups = {}
    for i, g, _, x in rows:
        if x is not None:
            groups.setdefault(g, []).append(nums[i])
    bad = []
    for g, a, b, c, d, s, tt, av in got:
        vs = groups.get(g, [])
        if not (same(a, b) and same(c, d) and same(s, ref_sum(vs)) and same(tt, ref_total(vs))
                and same(av, ref_avg(vs))):
            bad.append((g, show(a), show(b), show(c), show(d), show(s), show(ref_sum(vs)), show(av), show(ref_avg(vs))))
    rep.check("%s_%s_groupby" % (tag, name), not bad and len(got) == len({g for _, g, _, _ in rows}),
              "%d groups differ, e.g. %s" % (len(bad), bad[:2]))


WINDOWS = [
    ("rows_sliding", "order by id rows between 3 preceding and 2 following"),
    ("rows_following", "order by id rows between current row and unbounded following"),
    ("rows_ahead", "order by id rows between 1 following and 4 following"),
    ("range_sliding", "order by k range between 2 preceding and 1 following"),
    ("range_unbounded_following", "order by k range between 1 preceding and unbounded following"),
    ("groups_sliding", "order by k groups between 1 preceding and 1 following"),
    ("partition_rows", "partition by g % 7 order by id rows between 5 preceding and current row"),
    ("running", "order by id"),
    ("exclude_current", "order by id rows between 2 preceding and 2 following exclude current row"),
]


class FrameRef:
    """Fast exact references for many frames over the same rows: each value's
    exact scaled integer (value * 2^1074) is computed once."""

    def __init__(self, nums):
        self.nums = nums
        self.scaled = {}
        for i, v in nums.items():
            if v is not None and not (isinstance(v, float) and math.isinf(v)):
                self.scaled[i] = exact([v]).numerator * ((1 << 1074) // exact([v]).denominator)

    def refs(self, ids):
        vs = [self.nums[i] for i in ids if self.nums[i] is not None]
        if not vs:
            return None, 0.0, None
        if any(isinstance(v, float) and math.isinf(v) for v in vs):
            return ref_sum(vs), ref_total(vs), ref_avg(vs)
        if all(isinstance(v, int) for v in vs):
            s = sum(vs)
            es = s if INT64_MIN <= s <= INT64_MAX else ("error", "integer overflow")
            return es, round_fraction(Fraction(s)), round_fraction(Fraction(s, len(vs)))
        f = Fraction(sum(self.scaled[i] for i in ids if self.nums[i] is not None), 1 << 1074)
        r = round_fraction(f)
        return r, r, round_fraction(f / len(vs))


def check_windows(rep, con, tag, name, rows):
    t = name
    rows_by_id = {i: x for i, _, _, x in rows}
    nums = numeric(con, t)
    fr = FrameRef(nums)
    for wname, w in WINDOWS:
        q = ("select id, gpu_max(x) over w, max(x) over w, gpu_min(x) over w, min(x) over w, "
             "gpu_sum(x) over w, gpu_total(x) over w, gpu_avg(x) over w, group_concat(id) over w, "
             "sum(x) over w from (select * from %s where id <= %d) window w as (%s)" % (t, WIN_ROWS, w))
        got = run(con, q)
        if isinstance(got, tuple):
            rep.check("%s_%s_win_%s" % (tag, name, wname), False, "error %r" % (got,))
            continue
        bad = []
        for i, a, b, c, d, s, tt, av, members, bsum in got:
            ids = [int(m) for m in members.split(",")] if members else []
            es, et, ea = fr.refs(ids)
            # max/min: the value of max()/min() over the frame, and the type
            # of the FIRST extreme in frame order (SQLite's own sliding
            # max()/min() may return a later int/real tie: a known difference)
            raw = [rows_by_id[j] for j in ids]
            fmax, fmin = first_extreme(raw, 1), first_extreme(raw, -1)
            ok = (a == b and same(a, fmax) and c == d and same(c, fmin)
                  and same(s, es) and same(tt, et) and same(av, ea))
            if name == "ints":  # small integers: sum() over the frame is exact
                ok = ok and same(s, bsum)
            if not ok:
                bad.append((i, "max", show(a), show(b), show(fmax), "min", show(c), show(d), show(fmin),
                            "sum", show(s), show(es), "total", show(tt), show(et), "avg", show(av), show(ea)))
        rep.check("%s_%s_win_%s" % (tag, name, wname), not bad and len(got) == WIN_ROWS,
                  "%d/%d rows differ, e.g. %s" % (len(bad), len(got), bad[:2]))


def check_utf16(rep, tag, cfg):
    """TEXT order is BINARY (memcmp) in the database's encoding: in a UTF-16
    database max() compares UTF-16 code units, which orders U+0101 below 'b'
    (UTF-8 bytes order it above)."""
    con = sqlite3.connect(":memory:")
    con.execute("pragma encoding = 'UTF-16le'")
    con.enable_load_extension(True)
    con.load_extension(connect.__globals__["LIB"])
    for k, v in cfg:
        con.execute("select gpuagg_config(?, ?)", (k, v))
    con.execute("create table u(x)")
    con.executemany("insert into u values (?)", [("b",), ("\u0101",), ("a",), ("\uff5e",), ("\U0001f600",)])
    got = con.execute("select gpu_max(x), max(x), gpu_min(x), min(x) from u").fetchone()
    rep.check("%s_utf16_db_text_order" % tag, same(got[0], got[1]) and same(got[2], got[3]),
              "gpu_max %r max %r gpu_min %r min %r" % got)
    con.close()


def big_table(rep, path):
    """Generate BIG_ROWS rows with generate_series in the sqlite3 CLI."""
    sql = """
create table big(i integer, r real, m, g integer);
insert into big select
  (value * 7919) %% 1000003 - 500000,
  ieee754(((value * 2654435761) %% 4503599627370496) + 4503599627370496, (value %% 61) - 90)
    * (case when value %% 3 = 0 then -1 else 1 end),
  case value %% 3 when 0 then value when 1 then value * 0.25 else value - 0.5 end,
  value %% 1000
from generate_series(1, %d);
""" % BIG_ROWS
    try:
        p = subprocess.run([SQLITE3, path], input=sql, capture_output=True, text=True)
    except OSError as e:
        return rep.check("big_generate_cli", False, "cannot run %s: %s" % (SQLITE3, e))
    return rep.check("big_generate_cli", p.returncode == 0 and not p.stderr, p.stderr[:300])


def big_refs(path):
    """Exact references of the big table, computed once: math.fsum is
    correctly rounded; the mixed column's integers are < 2^53, so float(int)
    is exact there."""
    con = sqlite3.connect(path)
    rs = [v for (v,) in con.execute("select r from big")]
    ms = [v for (v,) in con.execute("select m from big")]
    con.close()
    # every m is a multiple of 0.25 below 2^53: 4*m is an exact integer
    s4 = sum(int(v * 4) for v in ms)
    assert all(v * 4 == int(v * 4) for v in ms[:1000])
    return math.fsum(rs), math.fsum(float(v) for v in ms), round_fraction(Fraction(s4, 4 * len(ms)))


def check_big(rep, con, tag, refs):
    n = con.execute("select count(*) from big").fetchone()[0]
    rep.check("%s_big_rowcount" % tag, n == BIG_ROWS, "%d rows" % n)
    got = con.execute("select gpu_sum(i), sum(i), gpu_max(i), max(i), gpu_min(i), min(i), gpu_max(r), max(r), "
                      "gpu_min(r), min(r), gpu_max(m), max(m), gpu_min(m), min(m) from big").fetchone()
    for k, nm in enumerate(["sum_int", "max_int", "min_int", "max_real", "min_real", "max_mixed", "min_mixed"]):
        a, b = got[2 * k], got[2 * k + 1]
        rep.check("%s_big_%s" % (tag, nm), same(a, b), "gpu %s builtin %s" % (show(a), show(b)))
    got = con.execute("select gpu_sum(r), gpu_total(r), gpu_sum(m), gpu_avg(m), typeof(gpu_sum(m)) from big").fetchone()
    fr, fm, ea = refs
    rep.check("%s_big_sum_real" % tag, same(got[0], fr), "gpu %s fsum %s" % (show(got[0]), show(fr)))
    rep.check("%s_big_total_real" % tag, same(got[1], fr), "gpu %s fsum %s" % (show(got[1]), show(fr)))
    rep.check("%s_big_sum_mixed" % tag, same(got[2], fm) and got[4] == "real", "gpu %s fsum %s" % (show(got[2]), show(fm)))
    rep.check("%s_big_avg_mixed" % tag, same(got[3], ea), "gpu %s ref %s" % (show(got[3]), show(ea)))
    bad = con.execute("select count(*) from (select g, gpu_sum(i) a, sum(i) b, gpu_max(m) c, max(m) d "
                      "from big group by g) where not (a = b and typeof(a) = 'integer' and c = d "
                      "and typeof(c) = typeof(d))").fetchone()[0]
    rep.check("%s_big_groupby" % tag, bad == 0, "%d of 1000 groups differ" % bad)


def main():
    rep = Reporter("diff")
    r = random.Random(SEED)
    data = make_data(r)
    tmp = tempfile.mkdtemp(prefix="gpuagg_diff_")
    bigdb = os.path.join(tmp, "big.db")
    have_big = big_table(rep, bigdb)
    refs = big_refs(bigdb) if have_big else None
    for tag, cfg in mode_items():
        con = connect(config=cfg)
        for name, rows in data.items():
            con.execute("create table %s(id integer primary key, g, k, x)" % name)
            con.executemany("insert into %s values (?, ?, ?, ?)" % name, rows)
            check_aggregates(rep, con, tag, name, rows)
            if name in ("ints", "reals", "mixednum", "everything", "bigints"):
                check_windows(rep, con, tag, name, rows)
        con.close()
        check_utf16(rep, tag, cfg)
        if have_big:
            con = connect(bigdb, config=cfg)
            check_big(rep, con, tag, refs)
            con.close()
    try:
        os.remove(bigdb)
        os.rmdir(tmp)
    except OSError:
        pass
    rep.finish()


if __name__ == "__main__":
    main()
