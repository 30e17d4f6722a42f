#!/usr/bin/env python3
"""test_var.py — exact variance and standard deviation (issue 39).

gpu_var_samp, gpu_var_pop, gpu_stddev_samp, gpu_stddev_pop (gpu_variance,
gpu_stddev), gpu_var_state and gpu_var_merge against exact references:
fractions.Fraction for the variance (float(Fraction) rounds once, ties to
even), and for the standard deviation an integer square root of the scaled
rational with exact tie detection (math.sqrt(float(q)) is wrong in about
13% of small random cases).  Data: random mixes, 2^+-500, 2^-1000,
subnormals, 1e9 + noise, int64 above 2^53, 1e6 equal values (exactly 0.0),
TEXT/BLOB as sum() takes them, infinities; states merged in random trees;
window frames (xInverse: the stepped-back state equals the recomputed one
byte for byte); the errors of gpu_var_merge.  Every check runs in both
MODES (default, and the forced GPU configuration).

Environment: GPUAGG_LIB, VERBOSE (gatest.py); SEED (default 39); CASES
(random groups per mode, default 700).
"""

import math
import sqlite3
import os
import random
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import MODES, Reporter, connect  # noqa: E402

SEED = int(os.environ.get("SEED", "39"))
CASES = int(os.environ.get("CASES", "700"))
FNS = ("gpu_var_samp", "gpu_var_pop", "gpu_stddev_samp", "gpu_stddev_pop")


def as_number(v):
    """sum()'s view of a value: None, an int, or a float."""
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    raise TypeError(v)


def to_float(q):
    try:
        return float(q)
    except OverflowError:
        return math.inf


def sqrt_round(q):
    """The double nearest sqrt(q) (q a non-negative Fraction), ties to even."""
    if q == 0:
        return 0.0
    lq = q.numerator.bit_length() - q.denominator.bit_length()
    k = (124 - lq) // 2 + 1  # floor(q 4^k) has 122 bits or more
    if k >= 0:
        num, den = q.numerator << (2 * k), q.denominator
    else:
        num, den = q.numerator, q.denominator << (-2 * k)
    fl = num // den
    s = math.isqrt(fl)
    exact = num % den == 0 and s * s == fl
    if exact:
        return to_float(Fraction(s) / (Fraction(2) ** k))
    # sqrt(q) lies strictly inside (s, s+1) 2^-k, whose 61+ bits are far
    # finer than any rounding boundary: its midpoint rounds as sqrt(q) does
    return to_float(Fraction(2 * s + 1) / (Fraction(2) ** (k + 1)))


def reference(vals):
    """(var_samp, var_pop, stddev_samp, stddev_pop) of the non-NULL vals."""
    xs = [as_number(v) for v in vals if v is not None]
    if any(isinstance(x, float) and not math.isfinite(x) for x in xs):
        return (None, None, None, None)
    n = len(xs)
    fs = [Fraction(x) for x in xs]
    s1 = sum(fs, Fraction(0))
    s2 = sum((f * f for f in fs), Fraction(0))
    out = []
    for samp in (True, False):
        if n < (2 if samp else 1):
            out.append(None)
            continue
        q = (n * s2 - s1 * s1) / (n * (n - 1) if samp else n * n)
        out.append(q)
    vs, vp = out
    return (
        None if vs is None else to_float(vs),
        None if vp is None else to_float(vp),
        None if vs is None else sqrt_round(vs),
        None if vp is None else sqrt_round(vp),
    )


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return struct.pack("<d", a) == struct.pack("<d", b)


# ---- data ----

def rand_double(rng):
    k = rng.random()
    if k < 0.3:
        return rng.uniform(-100, 100)
    if k < 0.45:
        return rng.choice([1, -1]) * rng.random() * 2.0 ** rng.randint(-1074, 1023)
    if k < 0.6:
        return math.ldexp(rng.choice([1, -1]) * rng.getrandbits(53), rng.choice([-500, 500, -1000, -1074, -1100]) + rng.randint(-3, 3) - 52)
    if k < 0.7:
        return 1e9 + rng.uniform(-1e-3, 1e-3)
    if k < 0.8:
        return float(rng.randint(-5, 5))
    return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]


def rand_value(rng):
    k = rng.random()
    if k < 0.08:
        return None
    if k < 0.3:
        return rng.choice([rng.randint(-10, 10), rng.randint(-2**63, 2**63 - 1),
                           rng.randint(2**53, 2**62), 2**63 - 1, -2**63])
    d = rand_double(rng)
    if not math.isfinite(d):
        d = 1.5
    return d


def near_ties(rng, want=6):
    """Triples of integers whose exact variance (or its square root) lies
    just above a rounding midpoint, by less than 2^-14 of a unit in the last
    place: only the bits below the quotient (the division remainders, the
    inexact square root) decide that they round up.  n = 3: the variance is
    S / 9 (pop) or S / 6 (samp) with S = a² + b² + (a + b)², x = (a + b, b, 0);
    a = b (mod 3) makes S a multiple of 3 (only the second division by 3 then
    leaves a remainder)."""
    found = {k: [] for k in range(4)}
    half = Fraction(1, 2)
    for _ in range(200000):
        if all(len(v) >= want for v in found.values()):
            break
        a = rng.getrandbits(rng.choice([30, 34, 40]))
        b = a + 3 * rng.getrandbits(20) if rng.random() < 0.5 else rng.getrandbits(34)
        S = a * a + b * b + (a + b) * (a + b)
        for k, q in enumerate((Fraction(S, 6), Fraction(S, 9))):
            u = q * Fraction(2) ** (52 - (q.numerator.bit_length() - q.denominator.bit_length()))
            while u >= 2 ** 53:
                u /= 2
            while u < 2 ** 52:
                u *= 2
            f = u - (u.numerator // u.denominator)
            if half < f < half + Fraction(1, 2 ** 14) and len(found[k]) < want:
                found[k].append([a + b, b, 0])
            # the square root: 90 bits of it, exactly
            j = (180 - (q.numerator.bit_length() - q.denominator.bit_length())) // 2
            num = q.numerator << (2 * j) if j >= 0 else q.numerator
            den = q.denominator if j >= 0 else q.denominator << (-2 * j)
            r = math.isqrt(num // den)
            drop = r.bit_length() - 53
            low = r & ((1 << drop) - 1)
            if (low >> (drop - 1)) == 1 and low - (1 << (drop - 1)) < (1 << (drop - 15)) \
                    and len(found[k + 2]) < want:
                found[k + 2].append([a + b, b, 0])
    return [v for k in range(4) for v in found[k]]


def families(rng):
    """Named lists of value sets: edge cases, then random ones."""
    fam = []
    t = 2.0 ** -1074
    fam.append(("pop_tie", [-1.0, 1.0 + 2.0 ** -52]))
    fam.append(("two_ints", [1, 2]))
    fam.append(("empty", []))
    fam.append(("one", [5.5]))
    fam.append(("one_int", [-7]))
    fam.append(("nulls", [None, None]))
    fam.append(("null_and_one", [None, 3.0, None]))
    fam.append(("subnormals", [t, 2 * t, 3 * t, -t]))
    fam.append(("subnormal_pair", [0.0, t]))
    fam.append(("tiny_1000", [2.0 ** -1000, 3 * 2.0 ** -1000, -2.0 ** -1000]))
    fam.append(("huge_500", [2.0 ** 500, -(2.0 ** 500), 3 * 2.0 ** 500]))
    fam.append(("tiny_500", [2.0 ** -500, 2.0 ** -499, 1.0]))
    fam.append(("dbl_max", [1.7976931348623157e308, -1.7976931348623157e308]))
    fam.append(("dbl_max_one", [1.7976931348623157e308, 1.7976931348623157e308]))
    fam.append(("huge_pair", [1e300, -1e300, 1e300]))
    fam.append(("int_extremes", [2**63 - 1, -2**63, 0]))
    fam.append(("int_big", [2**53 + 1, 2**53 + 3, 2**60 + 7, -(2**62) - 1]))
    fam.append(("int_equal_big", [2**62 + 1] * 5))
    fam.append(("mixed_ints", [1, 2.5, 2**55, -3]))
    fam.append(("cancel", [1e9 + 0.001, 1e9 + 0.002, 1e9 - 0.003, 1e9]))
    for r in range(12):
        fam.append(("cancel_%d" % r,
                    [1e9 + rng.uniform(-1e-6, 1e-6) for _ in range(rng.randint(2, 40))]))
    for r in range(12):
        e = rng.choice([-1074, -1060, -1022, -1000, -500, 0, 500, 960, 1000])
        fam.append(("mag_%d" % r,
                    [math.ldexp(rng.getrandbits(53) * rng.choice([1, -1]), e)
                     for _ in range(rng.randint(1, 20))]))
    for r in range(10):
        fam.append(("int53_%d" % r,
                    [rng.randint(2**53, 2**63 - 1) * rng.choice([1, -1])
                     for _ in range(rng.randint(2, 15))]))
    # found by simulating xvar.c's steps on random integers: the exact
    # variance lies above a midpoint by less than the quotient's last bit,
    # and only the second division's remainder says so
    fam.append(("remainder_tie_samp", [1625189278, 845700, 34291932, 8747173185, 391222, 1756125449,
                                       2142018113, 991084334, 292480475, 993657, 45059]))
    fam.append(("remainder_tie_pop", [915219, 403466085, 15722037807, 14824611953, 948538, 11727462777,
                                      16830002196, 23428, 16914871390, 2446049620, 283857]))
    for r, vals in enumerate(near_ties(rng)):
        fam.append(("near_tie_%d" % r, vals))
        fam.append(("near_tie_real_%d" % r, [float(v) for v in vals]))
    for r in range(CASES):
        n = rng.choice([0, 1, 2, 2, 3, 4, 5, 8, 13, 30])
        fam.append(("rand_%d" % r, [rand_value(rng) for _ in range(n)]))
    for r in range(CASES // 3):  # small random ones: the stddev ties area
        n = rng.randint(2, 5)
        fam.append(("small_%d" % r, [rng.randint(-8, 8) / rng.choice([1, 2, 4, 8, 3]) for _ in range(n)]))
    return fam


def load(con, fam):
    con.execute("DROP TABLE IF EXISTS t")
    con.execute("CREATE TABLE t(g INTEGER, i INTEGER, x)")
    rows = []
    for gi, (_, vals) in enumerate(fam):
        if not vals:
            rows.append((gi, 0, None))  # the empty group: one NULL
        for i, v in enumerate(vals):
            rows.append((gi, i, v))
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)


def check_groups(rep, con, mode, fam):
    sql = "SELECT g, %s FROM t GROUP BY g" % ", ".join(
        "%s(x)" % f for f in FNS + ("gpu_variance", "gpu_stddev"))
    got = {r[0]: r[1:] for r in con.execute(sql)}
    for gi, (name, vals) in enumerate(fam):
        want = reference(vals)
        g = got[gi]
        ok = all(same(a, b) for a, b in zip(g[:4], want))
        ok = ok and same(g[4], g[0]) and same(g[5], g[2])
        rep.check("%s %s" % (mode, name), ok, "got %r want %r for %r" % (g, want, vals[:6]))


def check_semantics(rep, con, mode):
    one = lambda q: con.execute(q).fetchone()
    # TEXT and BLOB as sum() takes them: the numeric prefix, 'abc' as 0.0
    for name, vals in (("text", "('12abc'), ('3'), ('abc')"),
                       ("blob", "(x'3132'), (x'33'), (4)"),
                       ("text_real", "('1.5e3'), (' 7 '), (2.25)")):
        con.execute("DROP TABLE IF EXISTS u")
        con.execute("CREATE TABLE u(v)")
        con.execute("INSERT INTO u VALUES %s" % vals)
        got = one("SELECT gpu_var_samp(v), gpu_stddev_pop(v), typeof(gpu_var_pop(v)) FROM u")
        # the reference: sum()'s value of each row alone
        each = [r[0] for r in con.execute("SELECT sum(v) FROM u GROUP BY rowid")]
        want = reference(each)
        rep.check("%s %s as sum() takes it" % (mode, name),
                  same(got[0], want[0]) and same(got[1], want[3]) and got[2] == "real",
                  "got %r want %r (%r)" % (got, want, each))
    # infinities: NULL, whatever else is there
    for q in ("SELECT %s(v) FROM (SELECT 1e999 AS v UNION ALL SELECT 1)",
              "SELECT %s(v) FROM (SELECT -1e999 AS v UNION ALL SELECT 1.0 UNION ALL SELECT 2)",
              "SELECT %s(v) FROM (SELECT '1e999' AS v UNION ALL SELECT 1.0)"):
        for f in FNS:
            rep.check("%s inf %s %s" % (mode, f, q[-30:]), one(q % f)[0] is None, one(q % f))
    # a variance beyond DBL_MAX is +Inf; its stddev is finite
    got = one("SELECT gpu_var_pop(v), gpu_stddev_pop(v) FROM (SELECT -1e300 AS v UNION ALL SELECT 1e300)")
    rep.check("%s var overflow" % mode, got[0] == math.inf and got[1] == 1e300, got)
    # n < 2 / n = 0
    got = one("SELECT gpu_var_samp(v), gpu_stddev_samp(v), gpu_var_pop(v), gpu_stddev_pop(v), typeof(gpu_var_pop(v)) FROM (SELECT 4 AS v)")
    rep.check("%s n=1" % mode, got == (None, None, 0.0, 0.0, "real"), got)
    got = one("SELECT gpu_var_samp(v), gpu_var_pop(v), gpu_stddev_pop(v) FROM (SELECT NULL AS v) WHERE 0")
    rep.check("%s n=0" % mode, got == (None, None, None), got)
    # the tie: stddev_pop{-1, 1+2^-52} = 1 + 2^-53 exactly -> 1.0
    got = one("SELECT gpu_stddev_pop(v) FROM (SELECT -1.0 AS v UNION ALL SELECT 1.0 + 2.220446049250313e-16)")
    rep.check("%s stddev_pop tie" % mode, same(got[0], 1.0), got)


def check_equal_values(rep, con, mode):
    """1e6 equal values: exactly 0.0 (a naive formula gives noise)."""
    for name, v in (("real", 0.1), ("int", 2**62 + 12345), ("big_real", 1e9 + 0.3)):
        got = con.execute(
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
            "WHERE i < 1000000) SELECT gpu_var_samp(?), gpu_var_pop(?), "
            "gpu_stddev(?), count(*) FROM c", (v, v, v)).fetchone()
        rep.check("%s 1e6 equal %s" % (mode, name),
                  got[:3] == (0.0, 0.0, 0.0) and struct.pack("<d", got[0]) == struct.pack("<d", 0.0),
                  got)


def check_states(rep, con, mode, rng):
    """States of random pieces merged in random trees: the one-pass bytes."""
    for case in range(40):
        n = rng.randint(0, 60)
        vals = [rand_value(rng) for _ in range(n)]
        con.execute("DROP TABLE IF EXISTS s")
        con.execute("CREATE TABLE s(i INTEGER PRIMARY KEY, x)")
        con.executemany("INSERT INTO s VALUES (?, ?)", list(enumerate(vals)))
        whole = con.execute("SELECT gpu_var_state(x) FROM s").fetchone()[0]
        cuts = sorted(rng.sample(range(n + 1), min(n + 1, rng.randint(1, 6))))
        bounds = [0] + cuts + [n]
        pieces = [con.execute("SELECT gpu_var_state(x) FROM s WHERE i >= ? AND i < ?",
                              (a, b)).fetchone()[0]
                  for a, b in zip(bounds, bounds[1:])]
        if rng.random() < 0.3:
            pieces.append(None)  # NULL states are skipped
        rng.shuffle(pieces)
        while len(pieces) > 1:  # a random tree: merge two neighbours
            k = rng.randrange(len(pieces) - 1)
            m = con.execute("WITH u(s) AS (VALUES (?), (?)) SELECT gpu_var_merge(s, 'state') FROM u",
                            (pieces[k], pieces[k + 1])).fetchone()[0]
            pieces[k:k + 2] = [m]
        ok = pieces[0] == whole
        want = reference(vals)
        got = con.execute("SELECT gpu_var_merge(?), gpu_var_merge(?, 'var_pop'), "
                          "gpu_var_merge(?, 'stddev_samp'), gpu_var_merge(?, 'STDDEV_POP')",
                          (whole,) * 4).fetchone()
        ok = ok and all(same(a, b) for a, b in zip(got, want))
        rep.check("%s state tree %d" % (mode, case), ok, "got %r want %r" % (got, want))


def check_windows(rep, con, mode, rng):
    """Sliding frames: results equal the reference over the frame, and the
    state stepped back (xInverse) is the recomputed state, byte for byte."""
    n = 80
    vals = [rand_value(rng) if rng.random() < 0.7 else rng.uniform(-1, 1) for _ in range(n)]
    con.execute("DROP TABLE IF EXISTS w")
    con.execute("CREATE TABLE w(i INTEGER PRIMARY KEY, x)")
    con.executemany("INSERT INTO w VALUES (?, ?)", list(enumerate(vals)))
    for lo, hi in ((3, 2), (0, 5), (7, 0), (1, 1)):
        frame = "OVER (ORDER BY i ROWS BETWEEN %d PRECEDING AND %d FOLLOWING)" % (lo, hi)
        rows = con.execute("SELECT i, %s, gpu_var_state(x) %s FROM w ORDER BY i" % (
            ", ".join("%s(x) %s" % (f, frame) for f in FNS), frame)).fetchall()
        bad = []
        for r in rows:
            i = r[0]
            fr = vals[max(0, i - lo):i + hi + 1]
            want = reference(fr)
            fresh = con.execute("SELECT gpu_var_state(x) FROM w WHERE i BETWEEN ? AND ?",
                                (i - lo, i + hi)).fetchone()[0]
            if not all(same(a, b) for a, b in zip(r[1:5], want)) or r[5] != fresh:
                bad.append((i, r[1:5], want))
        rep.check("%s window %d/%d" % (mode, lo, hi), not bad, bad[:2])
        # the merge as a window function too
        st = con.execute("SELECT gpu_var_merge(s, 'var_pop') OVER (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
                         "FROM (SELECT i, gpu_var_state(x) OVER (ORDER BY i ROWS BETWEEN CURRENT ROW AND CURRENT ROW) AS s FROM w) ORDER BY i").fetchall()
        want = [reference(vals[max(0, i - 2):i + 1])[1] for i in range(n)]
        rep.check("%s merge window %d/%d" % (mode, lo, hi),
                  all(same(a[0], b) for a, b in zip(st, want)), (st[:3], want[:3]))


def check_errors(rep, con, mode):
    def err(q, args=()):
        try:
            con.execute(q, args).fetchall()
            return None
        except Exception as e:  # noqa: BLE001
            return str(e)
    sum_state = con.execute("SELECT gpu_sum_state(1)").fetchone()[0]
    var_state = con.execute("SELECT gpu_var_state(1.5)").fetchone()[0]
    cases = [
        ("text", "SELECT gpu_var_merge('x')", (), "gpu_var_merge: expects a state BLOB made by gpu_var_state(), not a TEXT value"),
        ("number", "SELECT gpu_var_merge(3)", (), "gpu_var_merge: expects a state BLOB made by gpu_var_state(), not a number"),
        ("garbage", "SELECT gpu_var_merge(x'0102')", (), "gpu_var_merge: not a gpuagg state"),
        ("sum kind", "SELECT gpu_var_merge(?)", (sum_state,), "gpu_var_merge: wrong kind of state: this is a sum state"),
        ("var into sum", "SELECT gpu_sum_merge(?)", (var_state,), "gpu_sum_merge: wrong kind of state: this is a variance state (gpu_var_state)"),
        ("truncated", "SELECT gpu_var_merge(?)", (var_state[:-1],), "gpu_var_merge: "),
        ("trailing", "SELECT gpu_var_merge(?)", (var_state + b"\0",), "gpu_var_merge: malformed state (trailing bytes)"),
        ("form", "SELECT gpu_var_merge(?, 'median')", (var_state,), "gpu_var_merge: FORM must be"),
    ]
    for name, q, args, want in cases:
        got = err(q, args)
        rep.check("%s error %s" % (mode, name), got is not None and got.startswith(want), got)
    # a state whose sum of squares is below (sum)^2/n: refused, never answered
    bad = bytearray(var_state)
    bad[-1] = 0
    bad[-2] = 0
    bad[-3] = 0
    bad[-4] = 1  # Σx² digit made tiny, Σx kept
    got = err("SELECT gpu_var_merge(?)", (bytes(bad),))
    rep.check("%s error inconsistent" % mode, got is not None and got.startswith("gpu_var_merge: malformed state"), got)
    # every prefix is refused (truncation), no crash
    bad = [k for k in range(len(var_state)) if err("SELECT gpu_var_merge(?)", (var_state[:k],)) is None]
    rep.check("%s error prefixes" % mode, not bad, bad[:5])


def check_gpu_query(rep, con, mode):
    """gpu_query's grammar takes the six (DISTINCT, FILTER): over a file,
    the parallel path runs them (Σx² in the group states), a DISTINCT one
    too (its set answers it: issue 39, session 5), and a partial carries
    them (the finish gives the text's bits)."""
    import json
    import tempfile
    path = os.path.join(tempfile.mkdtemp(prefix="gpuagg_var_"), "t.db")
    fc = connect(path, config=MODES[mode])
    fc.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    cols = ", ".join(r[1] for r in con.execute("PRAGMA table_info(t)"))
    fc.execute(con.execute("SELECT sql FROM sqlite_schema WHERE name = 't'").fetchone()[0])
    fc.executemany("INSERT INTO t VALUES (%s)" % ",".join("?" * len(cols.split(","))),
                   con.execute("SELECT * FROM t ORDER BY rowid").fetchall())
    for dist in ("DISTINCT ", ""):
        sql = ("SELECT g, gpu_stddev(x), gpu_var_pop(%sx) FILTER (WHERE i > 0), gpu_variance(x), "
               "gpu_stddev_pop(x), gpu_var_samp(x), gpu_stddev_samp(x), gpu_total(x) FROM t GROUP BY g "
               "HAVING gpu_var_pop(x) IS NOT NULL ORDER BY gpu_stddev(x), g" % dist)
        want = fc.execute(sql).fetchall()
        fc.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql.replace("'", "''"))
        for th in (1, 2, 4):
            fc.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = fc.execute("SELECT * FROM temp.q").fetchall()
            ls = json.loads(fc.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
            ok = ls["path"] == "parallel"
            rep.check("%s gpu_query %sthreads %d" % (mode, dist.lower(), th), got == want and ok,
                      "path %r why %r, %d rows vs %d" % (ls["path"], ls.get("why"), len(got), len(want)))
        fc.execute("DROP TABLE temp.q")
    sql = "SELECT gpu_stddev(x), gpu_var_pop(x), count(*) FROM t"
    want = fc.execute(sql).fetchall()
    fc.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql)
    try:
        blob = fc.execute("SELECT gpu_query_partial(?)", (sql,)).fetchone()[0]
        got = fc.execute("SELECT * FROM temp.q WHERE gpuagg_partial = ?", (blob,)).fetchall()
    except sqlite3.Error as e:
        got = str(e)
    fc.execute("DROP TABLE temp.q")
    rep.check("%s gpu_query_partial carries the variance" % mode, got == want, (got, want))
    if mode == "default":
        check_host_cache(rep, fc)
    fc.close()


def check_host_cache(rep, fc):
    """A host entry answers the variances (cache_host.c rule 20): few
    groups, values of one binade (rule 15's integers of one scale, whose
    squares pass 2^128 within a word), mixed with INTEGERs, NULLs, other
    binades and an infinity; the same bits as the serial text."""
    import json
    rng = random.Random(SEED + 20)
    rows = []
    for i in range(6000):
        k = rng.random()
        x = (rng.uniform(64, 128) if k < 0.85 else rng.randint(-2**62, 2**62) if k < 0.9 else None if k < 0.95
             else rng.uniform(-1e-3, 1e-3) if k < 0.999 else float("inf"))
        rows.append((rng.randint(0, 3), i % 5, x))
    fc.execute("CREATE TABLE w(g INTEGER, h INTEGER, x REAL)")
    fc.executemany("INSERT INTO w VALUES (?, ?, ?)", rows)
    fc.execute("CREATE TABLE w2(g INTEGER, x REAL)")  # one binade only, no infinity
    fc.executemany("INSERT INTO w2 VALUES (?, ?)", [(rng.randint(0, 2), rng.uniform(64, 128)) for _ in range(5000)])
    fc.execute("SELECT gpu_cache('w', 'g, h, x')")
    fc.execute("SELECT gpu_cache('w2', 'g, x')")
    for sql in ("SELECT g, gpu_stddev(x), gpu_var_pop(x), gpu_sum(x) FROM w GROUP BY g ORDER BY g",
                "SELECT g, gpu_stddev(x), gpu_var_samp(x) FROM w WHERE x < 1e300 GROUP BY g ORDER BY g",
                "SELECT g, h, gpu_stddev_pop(x) FROM w WHERE x < 1e300 GROUP BY g, h ORDER BY g, h",
                "SELECT gpu_variance(x), gpu_stddev(x) FROM w WHERE x < 1e300",
                "SELECT g, gpu_stddev(x), gpu_var_pop(x) FROM w2 GROUP BY g ORDER BY g",
                "SELECT gpu_stddev_pop(x) FROM w2"):
        want = fc.execute(sql).fetchall()
        fc.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql)
        for th in (1, 2):
            fc.execute("SELECT gpuagg_config('threads', ?)", (th,))
            got = fc.execute("SELECT * FROM temp.q").fetchall()
            ls = json.loads(fc.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
            rep.check("host cache threads %d: %s" % (th, sql), got == want and ls["path"] == "cache",
                      "path %r why %r\n got %r\nwant %r" % (ls["path"], ls.get("why"), got[:3], want[:3]))
        fc.execute("DROP TABLE temp.q")


def hpct_dvar(rep):
    """Issue 39 (session 5): a DISTINCT variance in gpu_query runs on the
    parallel path, from a host entry of the cache (its INTEGER column by the
    hash sets, not the bitmaps) and in partials, the same bits as SQLite's
    text: the set of distinct values answers it (gstate.h rule 9)."""
    import json
    import tempfile
    d = tempfile.mkdtemp(prefix="gpuagg_hpct_dvar_")
    con = connect(os.path.join(d, "v.db"))
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("SELECT gpuagg_config('device', 'cpu')")
    con.execute("CREATE TABLE dv(g INTEGER, i INTEGER, x REAL)")
    r = random.Random(SEED + 3905)
    con.execute("BEGIN")
    con.executemany("INSERT INTO dv VALUES (?, ?, ?)",
                    [(r.randrange(5), r.choice([None, r.randrange(-40, 40), (1 << 60) + r.randrange(9)]),
                      r.choice([None, 0.0, -0.0, 1e9 + r.random(), r.uniform(-5, 5), 2.5])) for _ in range(3000)])
    con.execute("COMMIT")
    text = ("SELECT g, gpu_var_samp(DISTINCT i), gpu_stddev_pop(DISTINCT x), gpu_variance(DISTINCT x + i), "
            "gpu_stddev(i), count(*) FROM dv GROUP BY g ORDER BY g")
    want = con.execute(text).fetchall()

    def via(label):
        con.execute("DROP TABLE IF EXISTS temp.dq")
        con.execute("CREATE VIRTUAL TABLE temp.dq USING gpu_query('%s')" % text.replace("'", "''"))
        try:
            got = con.execute("SELECT * FROM temp.dq").fetchall()
        except sqlite3.Error as e:
            got = str(e)
        ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}
        return got, ls.get("path"), ls.get("why")

    def bits(rows):
        return [tuple(struct.pack("<d", v) if isinstance(v, float) else v for v in row) for row in rows] \
            if isinstance(rows, list) else rows
    con.execute("SELECT gpuagg_config('threads', 2)")
    got, path, why = via("parallel")
    rep.check("hpct: a DISTINCT variance on the parallel path", bits(got) == bits(want) and path == "parallel",
              repr((path, why, got if isinstance(got, str) else got[:2], want[:2])))
    con.execute("SELECT gpu_cache('dv', 'g, i, x')")
    got, path, why = via("cache")
    rep.check("hpct: a DISTINCT variance from a host entry", bits(got) == bits(want) and path == "cache",
              repr((path, why, got if isinstance(got, str) else got[:2], want[:2])))
    try:
        p = con.execute("SELECT gpu_query_partial(?)", (text,)).fetchone()[0]
        m = con.execute("SELECT gpu_query_merge(?, ?)", (p, p)).fetchone()[0]
        info = json.loads(con.execute("SELECT gpu_query_partial_info(?)", (m,)).fetchone()[0])
        f = connect()
        f.executescript(info["create"])
        f.execute("CREATE VIRTUAL TABLE temp.dq USING gpu_query('%s')" % text.replace("'", "''"))
        got = f.execute("SELECT * FROM temp.dq WHERE gpuagg_partial = ?", (m,)).fetchall()
        f.close()
    except sqlite3.Error as e:
        got = str(e)
    con.execute("INSERT INTO dv SELECT * FROM dv")  # the partial merged with itself: every row twice
    want2 = con.execute(text).fetchall()
    rep.check("hpct: a DISTINCT variance's partial, merged with itself", bits(got) == bits(want2),
              repr((got if isinstance(got, str) else got[:2], want2[:2])))
    con.close()
    import shutil
    shutil.rmtree(d, ignore_errors=True)


def main():
    rep = Reporter("var")
    for mode, cfg in MODES.items():
        rng = random.Random(SEED)
        con = connect(config=cfg)
        fam = families(rng)
        load(con, fam)
        check_groups(rep, con, mode, fam)
        check_semantics(rep, con, mode)
        check_states(rep, con, mode, rng)
        check_windows(rep, con, mode, rng)
        check_errors(rep, con, mode)
        check_gpu_query(rep, con, mode)
        if mode == "default":
            check_equal_values(rep, con, mode)
        con.close()
    hpct_dvar(rep)  # issue 39 (session 5)
    rep.finish()


if __name__ == "__main__":
    main()
