"""test_state.py — exact aggregate states: gpu_<agg>_state / gpu_<agg>_merge.

Checked, values AND storage class (reals bit for bit) everywhere:
  - merging per-group states equals the aggregate over the whole table, for
    every aggregate, on random tables with mixed types, NULLs, text, blobs,
    +-Inf, huge and tiny reals and int64 extremes, for several groupings
    (integer overflow is decided on the exact total of all states);
  - max/min merges: among equal INTEGER and REAL the state merged first wins
    (the reference folds the per-group gpu_max/gpu_min in merge order, and
    the value must equal the built-in max()/min());
  - round trips through a stored table (closed and reopened), through
    ATTACHed databases (sharding), roll-ups (daily -> monthly), windows;
  - empty states, NULL states skipped, canonical BLOBs (equal sums give
    equal bytes), the documented byte layout (built here from README);
  - every class of bad BLOB gives an error naming the function;
  - UTF-16 databases: TEXT states round-trip; a TEXT state of another
    encoding is refused by name.
The references are gpu_sum & co. over the whole table (checked against
Python's exact arithmetic by tests/test_exact.py and test_diff.py) and the
exact references of gatest.
"""

import os
import random
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import (Reporter, connect, configure, mode_items, same, show,  # noqa: E402
                    ref_sum, ref_total, ref_avg, INT64_MAX, INT64_MIN, DBL_MAX,
                    DBL_TRUE_MIN, INF)

SEED = int(os.environ.get("SEED", "11"))
rep = Reporter("state")
AGGS = ["sum", "total", "avg", "max", "min"]
TMP = tempfile.mkdtemp(prefix="gpuagg_state_")


def run(con, sql, params=()):
    try:
        return con.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return ("error", str(e))


def one(con, sql, params=()):
    r = run(con, sql, params)
    if isinstance(r, tuple):
        return r
    return r[0][0] if r else None


def same_or_err(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    return same(a, b)


def shown(v):
    return repr(v) if isinstance(v, tuple) else show(v)


# ------------------------------------------------------------------ data

def gen_value(r):
    k = r.randrange(14)
    if k == 0:
        return None
    if k == 1:
        return r.randint(-1000, 1000)
    if k == 2:
        return r.choice([INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 1 << 53, (1 << 53) + 1])
    if k == 3:
        return r.randint(INT64_MIN, INT64_MAX)
    if k == 4:
        return r.uniform(-1e6, 1e6)
    if k == 5:
        return r.uniform(-1, 1) * 10.0 ** r.randint(-308, 308)
    if k == 6:
        return r.choice([INF, -INF, DBL_MAX, -DBL_MAX, DBL_TRUE_MIN, -DBL_TRUE_MIN, 1e-310, -0.0, 0.1])
    if k == 7:
        return float(r.randint(-20, 20))  # ties with the integers
    if k == 8:
        return r.randint(-20, 20)
    if k == 9:
        return "".join(r.choice("aAbz09 é\u4e2d\U0001f600-") for _ in range(r.randint(0, 5)))
    if k == 10:
        return r.choice(["12", " 7 ", "1.5e3", "12abc", "-9223372036854775808", "1e999", "x"])
    if k == 11:
        return bytes(r.getrandbits(8) for _ in range(r.randint(0, 4)))
    if k == 12:
        return r.choice([1e300, -1e300, 1e308, -1e308])
    return r.uniform(-1, 1) * 2.0 ** r.randint(-1074, -1000)


PROFILES = {
    # name: (value generator, rows)
    "mixed": (gen_value, 1500),
    "ints": (lambda r: r.choice([r.randint(-1000, 1000), r.randint(INT64_MIN, INT64_MAX), None]), 1500),
    "extreme_ints": (lambda r: r.choice([INT64_MAX, INT64_MAX - 1, INT64_MIN, 5, -5, None]), 400),
    "reals": (lambda r: r.choice([r.uniform(-1, 1) * 10.0 ** r.randint(-300, 300), r.uniform(-1e3, 1e3),
                                  None, 1e308, -1e308]), 1500),
    "ties": (lambda r: r.choice([5, 5.0, 3, 3.0, -2, -2.0, None]), 300),
    "text_blob": (lambda r: r.choice([None, "a", "b", "ab", "é", "\U0001f600", b"\x00", b"\xff", 7, 7.0]), 300),
}


def make_table(con, name, gen, n, r):
    con.execute("drop table if exists %s" % name)
    con.execute("create table %s(id integer primary key, k1, k2, k3, x)" % name)
    rows = []
    for i in range(1, n + 1):
        rows.append((i, r.randrange(3), r.randrange(40), r.randrange(n + 1), gen(r)))
    con.execute("begin")
    con.executemany("insert into %s values (?, ?, ?, ?, ?)" % name, rows)
    con.execute("commit")
    return rows


# ------------------------------------------------------------------ max/min oracle

def key(v):
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, str):
        return (2, v.encode("utf-8", "surrogatepass"))
    return (3, bytes(v))


def fold_best(vals, sign):
    """The merge rule: strictly better replaces; among equals the first stays."""
    best = None
    for v in vals:
        if v is None:
            continue
        if best is None or (key(v) > key(best) if sign > 0 else key(v) < key(best)):
            best = v
    return best


# ------------------------------------------------------------------ 1. merge == whole

def check_merge_equals_whole(con, mode):
    r = random.Random(SEED)
    for pname, (gen, n) in PROFILES.items():
        make_table(con, "t", gen, n, r)
        for agg in AGGS:
            whole = one(con, "select gpu_%s(x) from t" % agg)
            for k in ("k1", "k2", "k3", "id", "'all'"):
                got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from t group by %s order by %s)"
                          % (agg, agg, k, k))
                name = "%s_%s_%s_by_%s" % (mode, pname, agg, k.strip("'"))
                if agg in ("sum", "total", "avg"):
                    rep.check(name, same_or_err(got, whole), "merge %s, whole %s" % (shown(got), shown(whole)))
                    continue
                # max/min: the value is max()/min()'s; the type follows the merge order
                per = run(con, "select gpu_%s(x) from t group by %s order by %s" % (agg, k, k))
                want = fold_best([p[0] for p in per], 1 if agg == "max" else -1)
                builtin = one(con, "select %s(x) from t" % agg)
                ok = same(got, want) and got == builtin and key(got) == key(builtin) if got is not None \
                    else builtin is None
                rep.check(name, ok, "merge %s, fold %s, builtin %s" % (shown(got), shown(want), shown(builtin)))
                if k == "'all'":  # one state: exactly gpu_max's answer, type included
                    rep.check(name + "_one_state", same(got, whole), "%s vs %s" % (shown(got), shown(whole)))
        # the sum family's states are one format: any merge over any of them
        for st in ("sum", "total", "avg"):
            for mg in ("sum", "total", "avg"):
                if st == mg:
                    continue
                got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from t group by k2)" % (mg, st))
                whole = one(con, "select gpu_%s(x) from t" % mg)
                rep.check("%s_%s_%s_state_%s_merge" % (mode, pname, st, mg), same_or_err(got, whole),
                          "%s vs %s" % (shown(got), shown(whole)))


# ------------------------------------------------------------------ 2. exact references

def check_exact(con):
    """Independent of gpu_sum: Python's exact arithmetic on the values as
    sum() classifies them."""
    r = random.Random(SEED + 1)
    rows = make_table(con, "e", gen_value, 800, r)
    nums = dict(con.execute("select id, sum(x) from e group by id").fetchall())
    vals = [nums[i] for i, _, _, _, x in rows if x is not None]
    for agg, ref in (("sum", ref_sum(vals)), ("total", ref_total(vals)), ("avg", ref_avg(vals))):
        got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from e group by k2)" % (agg, agg))
        rep.check("exact_%s" % agg, same_or_err(got, ref), "%s vs exact %s" % (shown(got), shown(ref)))
    # integer overflow is decided on the exact total, whatever the groups
    con.execute("drop table if exists o")
    con.execute("create table o(k, x)")
    con.executemany("insert into o values (?, ?)", [(1, INT64_MAX), (1, INT64_MAX), (2, -INT64_MAX), (3, -1)])
    # group 1 overflows on its own (2^64 - 2); the exact total fits
    got = one(con, "select gpu_sum_merge(s) from (select gpu_sum_state(x) s from o group by k)")
    rep.check("overflow_in_a_group_only", same(got, INT64_MAX - 1), shown(got))
    con.execute("insert into o values (4, 2)")
    rep.check("overflow_total", one(con, "select gpu_sum_merge(s) from (select gpu_sum_state(x) s from o group by k)")
              == ("error", "integer overflow"), "")
    rep.check("overflow_total_as_total", same(one(con, "select gpu_total_merge(s) from (select gpu_sum_state(x) s "
                                                        "from o group by k)"), float(INT64_MAX + 1)), "")
    # 2^95 and beyond: many extreme integers in many states
    con.execute("drop table if exists big")
    con.execute("create table big(k, x)")
    con.executemany("insert into big values (?, ?)", [(i % 50, INT64_MAX) for i in range(2000)])
    con.executemany("insert into big values (?, ?)", [(i % 50, INT64_MIN) for i in range(2000)])
    con.execute("insert into big values (0, 12345)")
    rep.check("big_cancel", same(one(con, "select gpu_sum_merge(s) from (select gpu_sum_state(x) s from big "
                                          "group by k)"), 12345 - 2000), "")


# ------------------------------------------------------------------ 3. empty, NULL, ties

def check_edges(con):
    con.execute("drop table if exists z")
    con.execute("create table z(x)")
    for agg in AGGS:
        st = one(con, "select gpu_%s_state(x) from z" % agg)
        rep.check("empty_state_%s_is_blob" % agg, isinstance(st, bytes) and len(st) >= 9, shown(st))
        want = one(con, "select gpu_%s(x) from z" % agg)
        got = one(con, "select gpu_%s_merge(gpu_%s_state) from (select gpu_%s_state(x) as gpu_%s_state from z)"
                  % (agg, agg, agg, agg))
        rep.check("empty_state_%s_merges_to_empty" % agg, same(got, want), "%s vs %s" % (shown(got), shown(want)))
        got = one(con, "select gpu_%s_merge(s) from (select null s)" % agg)
        rep.check("null_state_%s" % agg, same(got, want), shown(got))
        got = one(con, "select gpu_%s_merge(s) from (select 1 s) where 0" % agg)
        rep.check("no_state_%s" % agg, same(got, want), shown(got))
        st_all_null = one(con, "select gpu_%s_state(null) from (select 1 union all select 2)" % agg)
        rep.check("all_null_state_%s_equals_empty" % agg, st_all_null == st, "")
        # NULL states between real ones are skipped
        got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(3) s union all select null "
                       "union all select gpu_%s_state(4.5))" % (agg, agg, agg))
        want = one(con, "select gpu_%s(x) from (select 3 x union all select 4.5)" % agg)
        rep.check("null_skipped_%s" % agg, same(got, want), "%s vs %s" % (shown(got), shown(want)))
    # merge order between equal INTEGER and REAL
    for agg in ("max", "min"):
        for first, second in ((5, 5.0), (5.0, 5)):
            got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(?) s union all select gpu_%s_state(?))"
                      % (agg, agg, agg), (first, second))
            rep.check("tie_%s_%r_then_%r" % (agg, first, second), same(got, first), shown(got))
        # within one state: the first row
        got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from "
                       "(select 2 x union all select 2.0))" % (agg, agg))
        rep.check("tie_within_state_%s" % agg, same(got, 2), shown(got))
    # typeof of every result class
    cases = [("sum", "1, 2", 3), ("sum", "1, 2.0", 3.0), ("total", "1, 2", 3.0), ("avg", "1, 2", 1.5),
             ("max", "'a', x'00'", b"\x00"), ("min", "'a', x'00', 1", 1), ("max", "'b', 'a'", "b"),
             ("sum", "'12', 1", 13), ("sum", "x'31', 1", 2.0), ("sum", "9e999, -9e999", None),
             ("total", "9e999, -9e999", None), ("avg", "9e999, 1", INF), ("sum", "1e308, 1e308, -1e308", 1e308)]
    for agg, vals, want in cases:
        src = " union all ".join("select %s as x" % v for v in vals.split(", "))
        got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from (%s) group by typeof(x), x)"
                  % (agg, agg, src))
        whole = one(con, "select gpu_%s(x) from (%s)" % (agg, src))
        rep.check("typeof_%s_%s" % (agg, vals), same(got, want) and same(got, whole),
                  "%s want %s, gpu_%s %s" % (shown(got), shown(want), agg, shown(whole)))


# ------------------------------------------------------------------ 4. canonical and layout

def le64(v):
    return struct.pack("<Q", v & (1 << 64) - 1)


def hand_sum_state(ints, reals_digits=None, nreal=0):
    """A sum state built from README's layout: integers only, or with a
    real part given as (sign, lo, [digits])."""
    b = b"GAST" + bytes([1, 1, 0, 0])
    tot = sum(ints)
    b += le64(len(ints)) + le64(tot) + le64(tot >> 64) + le64(nreal) + le64(0) + le64(0) + le64(0)
    if reals_digits is None:
        b += bytes([0, 0, 0])
    else:
        sign, lo, digs = reals_digits
        b += bytes([sign, lo, len(digs)]) + b"".join(struct.pack("<I", d) for d in digs)
    return b


def check_canonical(con):
    r = random.Random(SEED + 2)
    vals = [r.choice([r.randint(-10 ** 6, 10 ** 6), r.uniform(-1e9, 1e9), r.randint(INT64_MIN, INT64_MAX)])
            for _ in range(300)]
    con.execute("drop table if exists c")
    con.execute("create table c(id integer primary key, x)")
    con.executemany("insert into c(x) values (?)", [(v,) for v in vals])
    a = one(con, "select gpu_sum_state(x) from c")
    b = one(con, "select gpu_sum_state(x) from (select x from c order by x desc)")
    c = one(con, "select gpu_avg_state(x) from (select x from c order by random())")
    rep.check("canonical_orders", a == b == c, "")
    # the documented bytes (README), built here by hand
    rep.check("layout_int_state", one(con, "select gpu_sum_state(x) from (select 5 x union all select -3)")
              == hand_sum_state([5, -3]), "")
    rep.check("layout_empty_state", one(con, "select gpu_total_state(null)") == hand_sum_state([]), "")
    rep.check("layout_bigint_state", one(con, "select gpu_sum_state(x) from (select 9223372036854775807 x "
                                              "union all select 9223372036854775807)")
              == hand_sum_state([INT64_MAX, INT64_MAX]), "")
    # 1.5: 3 * 2^-1 = 3 << 1073 units of 2^-1074: digit 33, 3 << 17
    rep.check("layout_real_state", one(con, "select gpu_sum_state(1.5)") == hand_sum_state([], (0, 33, [3 << 17]), 1),
              "")
    rep.check("layout_negative_real", one(con, "select gpu_sum_state(-1.5)")
              == hand_sum_state([], (1, 33, [3 << 17]), 1), "")
    # a hand-made state merges to its value
    rep.check("hand_state_merges", same(one(con, "select gpu_sum_merge(?)", (hand_sum_state([], (0, 33, [3 << 17]), 1),)),
                                        1.5), "")
    mx = b"GAST" + bytes([1, 2, 0, 0]) + bytes([3, 1]) + struct.pack("<I", 3) + "abc".encode()
    rep.check("layout_max_text", one(con, "select gpu_max_state('abc')") == mx, "")
    mn = b"GAST" + bytes([1, 3, 0, 0]) + bytes([2]) + struct.pack("<d", -0.0)
    rep.check("layout_min_real", one(con, "select gpu_min_state(-0.0)") == mn, "")
    mi = b"GAST" + bytes([1, 3, 0, 0]) + bytes([1]) + le64(-7)
    rep.check("layout_min_int", one(con, "select gpu_min_state(-7)") == mi, "")
    mb = b"GAST" + bytes([1, 2, 0, 0]) + bytes([4]) + struct.pack("<I", 2) + b"\x00\xff"
    rep.check("layout_max_blob", one(con, "select gpu_max_state(x'00ff')") == mb, "")
    rep.check("layout_max_empty", one(con, "select gpu_max_state(null)") == b"GAST" + bytes([1, 2, 0, 0, 0]), "")


# ------------------------------------------------------------------ 5. bad BLOBs

def check_bad(con):
    good = {
        "sum": one(con, "select gpu_sum_state(x) from (select 1.5 x union all select 2)"),
        "max": one(con, "select gpu_max_state('abc')"),
        "min": one(con, "select gpu_min_state(7)"),
    }
    kind_of = {"sum": "sum", "total": "sum", "avg": "sum", "max": "max", "min": "min"}
    for agg in AGGS:
        fn = "gpu_%s_merge" % agg
        own = good[kind_of[agg]]
        newer = own[:4] + bytes([2]) + own[5:]
        bads = {
            "text": "abc", "text_of_state": own.hex(), "integer": 5, "real": 2.5,
            "empty_blob": b"", "garbage": bytes(range(40)), "short": own[:6], "newer": newer,
            "version0": own[:4] + bytes([0]) + own[5:], "trailing": own + b"\x00",
            "reserved": own[:6] + b"\x01" + own[7:], "kind9": own[:5] + bytes([9]) + own[6:],
        }
        for i in range(8, len(own)):
            bads["truncated_%d" % i] = own[:i]
        for other, st in good.items():
            if other != kind_of[agg]:
                bads["a_%s_state" % other] = st
        for bname, b in bads.items():
            err = one(con, "select %s(s) from (select ? s)" % fn, (b,))
            ok = isinstance(err, tuple) and err[1].startswith(fn + ": ")
            rep.check("bad_%s_%s" % (agg, bname), ok, "got %s" % shown(err))
        # the error names what is wrong
        rep.check("bad_%s_newer_says_so" % agg, "newer" in str(one(con, "select %s(?)" % fn, (newer,))), "")
        # a bad state after good ones still fails the whole aggregate
        err = one(con, "select %s(s) from (select ? s union all select ?)" % fn, (own, own[:-1]))
        rep.check("bad_%s_after_good" % agg, isinstance(err, tuple) and err[1].startswith(fn + ": "), shown(err))
    # a NaN count: README's layout says always 0 from SQL, and only bytes
    # that _state can write are accepted (issue 22); one NaN with one real
    nan1 = (b"GAST" + bytes([1, 1, 0, 0]) + le64(0) * 3 + le64(1) + le64(0) * 2 + le64(1)
            + bytes([0, 0, 0]))
    for agg in ("sum", "total", "avg"):
        fn = "gpu_%s_merge" % agg
        err = one(con, "select %s(?)" % fn, (nan1,))
        rep.check("bad_%s_nan_count" % agg, isinstance(err, tuple) and err[1].startswith(fn + ": ")
                  and "NaN" in err[1], shown(err))
    # the same bytes with a NaN count of 0 are a state (+0.0 from one real)
    nan0 = nan1[:56] + le64(0) + nan1[64:]
    rep.check("nan_count_0_ok", same(one(con, "select gpu_total_merge(?)", (nan0,)), 0.0),
              shown(one(con, "select gpu_total_merge(?)", (nan0,))))
    # an empty table's sum state is no max state
    err = one(con, "select gpu_max_merge(gpu_sum_state) from (select gpu_sum_state(1) as gpu_sum_state)")
    rep.check("bad_sum_state_to_max", isinstance(err, tuple) and "sum state" in err[1], shown(err))
    # random garbage never crashes and never answers
    r = random.Random(SEED + 3)
    answered = []
    for i in range(400):
        b = bytearray(good[r.choice(["sum", "max", "min"])])
        for _ in range(r.randint(1, 4)):
            b[r.randrange(len(b))] = r.getrandbits(8)
        for agg in AGGS:
            got = one(con, "select gpu_%s_merge(?)" % agg, (bytes(b),))
            if not isinstance(got, tuple):
                answered.append((agg, bytes(b)))
    # anything answered must be a canonical state: the same bytes as the
    # state of the value it answers (max/min), or re-encodable (sum)
    bad = []
    for agg, b in answered:
        if agg in ("max", "min"):
            v = one(con, "select gpu_%s_merge(?)" % agg, (b,))
            again = one(con, "select gpu_%s_state(?)" % agg, (v,))
            if again != b and not (isinstance(v, str) or v is None):
                bad.append((agg, b.hex()))
    rep.check("garbage_answers_are_canonical", not bad, "%r" % bad[:3])
    # gpuagg_partial, the workers' fused aggregate, is on user connections
    # too: gpu_aggregate's serial path runs it there (STATE_API.md notes)
    b = one(con, "select gpuagg_partial(1)")
    rep.check("worker_function_fused_state", isinstance(b, bytes) and b[:4] == b"GAST" and b[5] == 4,
              shown(b))
    # the max/min states are not window functions; the sum family's are
    err = one(con, "select gpu_max_state(x) over () from (select 1 x)")
    rep.check("max_state_no_window", isinstance(err, tuple), shown(err))


# ------------------------------------------------------------------ 6. stored, attached, roll-up, windows

def check_storage(mode, cfg):
    path = os.path.join(TMP, "store_%s.db" % mode)
    if os.path.exists(path):
        os.unlink(path)
    con = connect(path, cfg)
    r = random.Random(SEED + 4)
    make_table(con, "t", gen_value, 1200, r)
    # 40 "days" (k2) in 4 "months" (k2 % 4)
    con.execute("create table daily as select k2 as day, k2 % 4 as m, gpu_sum_state(x) s, gpu_max_state(x) mx, "
                "gpu_min_state(x) mn from t group by k2")
    want = {agg: one(con, "select gpu_%s(x) from t" % agg) for agg in AGGS}
    monthly_want = run(con, "select k2 % 4, gpu_sum(x), gpu_avg(x) from t group by k2 % 4 order by 1")
    con.close()
    con = connect(path, cfg)
    for agg in AGGS:
        col = {"max": "mx", "min": "mn"}.get(agg, "s")
        got = one(con, "select gpu_%s_merge(%s) from (select * from daily order by day)" % (agg, col))
        if agg in ("max", "min"):
            ok = got == want[agg] and key(got) == key(want[agg]) if got is not None else want[agg] is None
        else:
            ok = same_or_err(got, want[agg])
        rep.check("%s_stored_%s" % (mode, agg), ok, "%s vs %s" % (shown(got), shown(want[agg])))
    # roll-up: the daily states merged into "monthly" (here: k1) answers
    got = run(con, "select m, gpu_sum_merge(s), gpu_avg_merge(s) from daily group by m order by m")
    rep.check("%s_rollup" % mode, len(got) == len(monthly_want) and all(
        all(same_or_err(a, b) for a, b in zip(x, y)) for x, y in zip(got, monthly_want)),
        "%r vs %r" % (got[:2], monthly_want[:2]))
    # windows: a running total over the daily states = gpu_sum over the rows so far
    got = run(con, "select day, gpu_total_merge(s) over (order by day), gpu_sum_merge(s) over "
                   "(order by day rows between 2 preceding and current row) from daily order by day")
    ref = run(con, "select a.day, (select gpu_total(x) from t where k2 <= a.day), "
                   "(select gpu_sum(x) from t where k2 between (select min(day) from (select day from daily "
                   "where day <= a.day order by day desc limit 3)) and a.day) from daily a order by a.day")
    rep.check("%s_window_merge" % mode, not isinstance(got, tuple) and len(got) == len(ref) and all(
        all(same_or_err(a, b) for a, b in zip(x, y)) for x, y in zip(got, ref)),
        "%r vs %r" % (got if isinstance(got, tuple) else got[:3], ref[:3]))
    got = run(con, "select gpu_sum_merge(s) from (select gpu_sum_state(x) over (order by id rows between 3 "
                   "preceding and current row) s from t where id % 4 = 0)")
    ref = run(con, "select gpu_sum(x) from t")
    rep.check("%s_window_state" % mode, got == ref or (not isinstance(got, tuple) and same_or_err(got[0][0], ref[0][0])),
              "%r vs %r" % (got, ref))
    con.close()
    # sharding: two files ATTACHed, their states merged
    paths = [os.path.join(TMP, "shard%d_%s.db" % (i, mode)) for i in (1, 2)]
    for i, p in enumerate(paths):
        if os.path.exists(p):
            os.unlink(p)
        c = sqlite3.connect(p)
        c.execute("create table t(id integer primary key, k1, k2, k3, x)")
        c.executemany("insert into t values (?, ?, ?, ?, ?)",
                      [(j, 0, 0, 0, gen_value(r)) for j in range(1, 700)])
        c.commit()
        c.close()
    con = connect(":memory:", cfg)
    con.execute("attach ? as a", (paths[0],))
    con.execute("attach ? as b", (paths[1],))
    for agg in AGGS:
        got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from a.t union all "
                       "select gpu_%s_state(x) from b.t)" % (agg, agg, agg))
        want = one(con, "select gpu_%s(x) from (select x from a.t union all select x from b.t)" % agg)
        if agg in ("max", "min"):
            ok = got == want and key(got) == key(want) if got is not None else want is None
        else:
            ok = same_or_err(got, want)
        rep.check("%s_sharded_%s" % (mode, agg), ok, "%s vs %s" % (shown(got), shown(want)))
    con.close()


def check_windows(con):
    """Sliding frames over finite numbers: removal must be exact."""
    r = random.Random(SEED + 5)
    con.execute("drop table if exists w")
    con.execute("create table w(id integer primary key, day, x)")
    con.execute("begin")
    con.executemany("insert into w(day, x) values (?, ?)",
                    [(r.randrange(30), r.choice([r.randint(-10 ** 6, 10 ** 6), r.uniform(-1, 1) * 10.0 ** r.randint(-20, 20),
                                                 None, 1e300, -1e300])) for _ in range(600)])
    con.execute("commit")
    for agg in ("sum", "total", "avg"):
        for frame in ("rows between 2 preceding and current row", "rows between 1 preceding and 3 following",
                      "rows between current row and unbounded following"):
            got = run(con, "select day, gpu_%s_merge(s) over (order by day %s) from (select day, gpu_%s_state(x) s "
                           "from w group by day) order by day" % (agg, frame, agg))
            # the reference: the same frame over the days, aggregated over the rows
            days = [d for d, in con.execute("select distinct day from w order by day")]
            want = []
            for i, d in enumerate(days):
                if frame.startswith("rows between 2"):
                    lo, hi = max(0, i - 2), i
                elif frame.startswith("rows between 1"):
                    lo, hi = max(0, i - 1), min(len(days) - 1, i + 3)
                else:
                    lo, hi = i, len(days) - 1
                want.append((d, one(con, "select gpu_%s(x) from w where day between ? and ?" % agg,
                                    (days[lo], days[hi]))))
            ok = not isinstance(got, tuple) and len(got) == len(want) and all(
                a[0] == b[0] and same_or_err(a[1], b[1]) for a, b in zip(got, want))
            bad = [] if ok or isinstance(got, tuple) else [(a, b) for a, b in zip(got, want) if not same_or_err(a[1], b[1])]
            rep.check("window_%s_%s" % (agg, frame.replace(" ", "_")), ok, "%r" % (got if isinstance(got, tuple) else bad[:2]))
        # the state itself in a sliding frame: each frame's state merges to the frame's aggregate
        frames = run(con, "select id, gpu_%s_state(x) over (order by id rows between 4 preceding and current row) "
                          "from w order by id" % agg)
        bad = 0
        for i, st in frames[:200]:
            want = one(con, "select gpu_%s(x) from w where id between ? and ?" % agg, (i - 4, i))
            if not same_or_err(one(con, "select gpu_%s_merge(?)" % agg, (st,)), want):
                bad += 1
        rep.check("window_state_%s" % agg, not isinstance(frames, tuple) and len(frames) == 600 and bad == 0,
                  "%d frames differ" % bad)


# ------------------------------------------------------------------ 7. UTF-16 databases

def check_utf16():
    texts = ["a", "\uff41", "\U0001f600", "é", "Z", "\ue000"]
    for enc in ("UTF-16le", "UTF-16be"):
        path = os.path.join(TMP, "u16_%s.db" % enc)
        if os.path.exists(path):
            os.unlink(path)
        con = connect(path)
        con.execute("pragma encoding = '%s'" % enc)
        con.execute("create table t(k, x)")
        con.execute("begin")
        con.executemany("insert into t values (?, ?)", [(i % 3, s) for i, s in enumerate(texts)] + [(0, 3), (1, 2.5)])
        con.execute("commit")
        for agg in ("max", "min"):
            want = one(con, "select gpu_%s(x) from t" % agg)
            got = one(con, "select gpu_%s_merge(s) from (select gpu_%s_state(x) s from t group by k)" % (agg, agg))
            rep.check("utf16_%s_%s" % (enc, agg), same(got, want) and got == one(con, "select %s(x) from t" % agg),
                      "%s vs %s" % (shown(got), shown(want)))
        st = one(con, "select gpu_max_state(x) from t")
        rep.check("utf16_%s_state_tag" % enc, st[8] == 3 and st[9] == (2 if enc == "UTF-16le" else 3), st.hex())
        tstate, nstate = con.execute("select gpu_max_state(x), gpu_max_state(k) from t").fetchone()
        # stored and reloaded in the same database
        con.execute("create table keep as select k, gpu_min_state(x) s from t group by k")
        con.close()
        con = connect(path)
        got = one(con, "select gpu_min_merge(s) from keep")
        want = one(con, "select gpu_min(x) from t")
        rep.check("utf16_%s_stored" % enc, same(got, want), "%s vs %s" % (shown(got), shown(want)))
        con.close()
        # in a UTF-8 database (they cannot be ATTACHed: the BLOB is copied):
        # text states of UTF-16 are refused by name, number states are fine
        u8 = connect(":memory:")
        err = one(u8, "select gpu_max_merge(?)", (tstate,))
        rep.check("utf16_%s_text_state_in_utf8_db" % enc,
                  isinstance(err, tuple) and err[1].startswith("gpu_max_merge: ") and enc in err[1], shown(err))
        rep.check("utf16_%s_number_state_in_utf8_db" % enc, same(one(u8, "select gpu_max_merge(?)", (nstate,)), 2),
                  "")
        u8.close()
    # and UTF-8 text states in a UTF-16 database
    u8 = connect(":memory:")
    st = one(u8, "select gpu_min_state('abc')")
    u16 = connect(":memory:")
    u16.execute("pragma encoding = 'UTF-16le'")
    err = one(u16, "select gpu_min_merge(?)", (st,))
    rep.check("utf8_text_state_in_utf16_db", isinstance(err, tuple) and err[1].startswith("gpu_min_merge: ")
              and "UTF-8" in err[1], shown(err))


def main():
    for mode, cfg in mode_items():
        con = connect(":memory:", cfg)
        check_merge_equals_whole(con, mode)
        con.close()
        check_storage(mode, cfg)
    con = connect()
    check_exact(con)
    check_edges(con)
    check_canonical(con)
    check_bad(con)
    check_windows(con)
    con.close()
    check_utf16()
    rep.finish()


main()
