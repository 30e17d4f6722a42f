"""test_exact.py — gpu_sum / gpu_total / gpu_avg against an exact reference.

The reference is the exact rational sum of the same doubles and int64s
(gatest.exact, a Fraction) rounded once to nearest-even by Python's
Fraction -> float conversion; math.fsum is a second, independent reference
for finite data.  Every data set is also stored in shuffled row orders and
queried under several configurations: the bits must never change.
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import (Reporter, connect, configure, q1, same, show, ref_sum, ref_total, ref_avg,  # noqa: E402
                    exact, round_fraction, fsum_ref, INT64_MAX, INT64_MIN, DBL_MAX, DBL_TRUE_MIN, INF)

SEED = int(os.environ.get("SEED", "20240601"))
CONFIGS = [
    ("default", []),
    ("cpu", [("device", "cpu")]),
    ("forced64k", [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")]),
    ("forced1m", [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", str(1 << 20))]),
    ("auto0", [("device", "auto"), ("cpu_max_rows", "0")]),
]


def rnd_double(r, emin=-1074, emax=1023):
    """A random finite double with a random exponent in [emin, emax]."""
    e = r.randint(emin, emax)
    m = r.getrandbits(53) | (1 << 52)
    v = math.ldexp(m, e - 52) if e - 52 >= -1074 else math.ldexp(m >> min(53, -1074 - (e - 52)), -1074)
    if math.isinf(v):
        v = DBL_MAX
    return -v if r.random() < 0.5 else v


def datasets(r):
    d = {}
    d["uniform"] = [r.uniform(-1, 1) for _ in range(2000)]
    d["tenth_x10"] = [0.1] * 10
    d["tenth_x12345"] = [0.1] * 12345
    d["cancel_1e100"] = [1e100, 1.0, -1e100]
    d["wide_range"] = [rnd_double(r, -1074, 1000) for _ in range(3000)]
    pairs = [rnd_double(r, -600, 900) for _ in range(1500)]
    d["cancel_pairs_residual"] = pairs + [-x for x in pairs] + [DBL_TRUE_MIN * 3, 1e-300]
    d["cancel_pairs_exact_zero"] = pairs[:500] + [-x for x in pairs[:500]]
    d["subnormals"] = [DBL_TRUE_MIN * r.randint(-(1 << 52), 1 << 52) for _ in range(2000)]
    d["subnormals_with_big"] = [1.0] + [DBL_TRUE_MIN * r.randint(1, 1000) for _ in range(100)] + [-1.0]
    d["near_max_overflow"] = [DBL_MAX] * 3 + [r.uniform(0, 1e300) for _ in range(50)]
    d["near_max_neg_overflow"] = [-DBL_MAX, -DBL_MAX * 0.75, 1.0]
    d["near_max_back_in_range"] = [DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, 5.0, -DBL_MAX * 0.5]
    d["near_max_half_ulp"] = [DBL_MAX, math.ldexp(1, 970)]
    d["near_max_below_half_ulp"] = [DBL_MAX, math.ldexp(1, 970) * (1 - 2 ** -52)]
    d["pos_inf"] = [1.0, INF, -DBL_MAX, 3]
    d["neg_inf"] = [-INF, 1e308, 1e308, 7]
    d["both_inf"] = [INF, 2.0, -INF]
    d["inf_with_ints"] = [INF, INT64_MAX, INT64_MAX]
    # round-half-even ties: an odd 53-bit integer times 2^k plus half an ulp
    ties = []
    for _ in range(200):
        m = r.getrandbits(52) | (1 << 52) | 1
        k = r.randint(-200, 200)
        ties.append(math.ldexp(m, k))
        ties.append(math.ldexp(1, k - 1))
    d["ties_half_even_pair"] = ties[:2]
    d["ties_half_even_pair2"] = ties[2:4]
    d["ties_half_even_pair_neg"] = [-ties[4], -ties[5]]
    d["ties_plus_tiny"] = ties[6:8] + [DBL_TRUE_MIN]
    d["ties_minus_tiny"] = ties[8:10] + [-DBL_TRUE_MIN]
    # The odd-mantissa ties above round up under both "ties to even" and
    # "ties away from zero".  With an EVEN mantissa the two rules differ
    # (even keeps m, away gives m + 1), so these catch the wrong rule.
    even = []
    for _ in range(8):
        m = (r.getrandbits(52) | (1 << 52)) & ~1
        k = r.randint(-200, 200)
        even.append((math.ldexp(m, k), math.ldexp(1, k - 1)))
    d["ties_even_mant_pair"] = list(even[0])
    d["ties_even_mant_pair2"] = list(even[1])
    d["ties_even_mant_pair_neg"] = [-even[2][0], -even[2][1]]
    d["ties_even_mant_plus_tiny"] = list(even[3]) + [DBL_TRUE_MIN]  # above the tie: up
    d["ties_even_mant_minus_tiny"] = list(even[4]) + [-DBL_TRUE_MIN]  # below: down
    # a tie reached through many values and integers: 2^53 + 1 (even below)
    d["ties_even_int_real"] = [9007199254740992, 1.0]
    d["ties_even_int_real_neg"] = [-9007199254740992, -1.0]
    d["ties_even_subnormal_avg"] = [DBL_TRUE_MIN * 2, DBL_TRUE_MIN * 3] * 3  # avg: 2.5 ulps -> 2
    d["ties_even_many"] = [even[5][0]] + [even[5][1] / 8] * 8
    # integers (INTEGER result, or the overflow error), and int/real mixes
    d["int64_edges_ok"] = [INT64_MAX, 1, -1, INT64_MIN, -1, 1, INT64_MAX]
    d["int64_overflow"] = [INT64_MAX, INT64_MAX, INT64_MIN, 2]
    d["int64_underflow"] = [INT64_MIN, INT64_MIN, INT64_MAX, -3]
    d["int64_many_cancel"] = [INT64_MAX] * 3000 + [INT64_MIN] * 3000 + [7000]
    d["int_random"] = [r.randint(INT64_MIN // 4096, INT64_MAX // 4096) for _ in range(3000)]
    d["mixed_int_real_2p53"] = [9007199254740993, 1.0, 9007199254740993, -0.5]
    d["mixed_big_ints_real"] = [INT64_MAX] * 10 + [0.5] + [INT64_MIN] * 9
    d["mixed_random"] = [r.randint(-10 ** 18, 10 ** 18) if r.random() < 0.5 else rnd_double(r, -30, 70)
                         for _ in range(3000)]
    d["mixed_with_nulls"] = [None, 3, None, 0.25, None]
    d["all_null"] = [None, None]
    d["empty"] = []
    d["large_wide"] = [rnd_double(r, -1074, 1020) for _ in range(60000)]
    return d


def defaults(con):
    """The connection's initial settings, to restore between configurations."""
    return [(n, str(q1(con, "select gpuagg_config(?)", (n,))))
            for n in ("cpu_max_rows", "device", "streams", "chunk_bytes", "devices")]


def make_tables(con, name, vals, r):
    orders = [list(vals), list(reversed(vals))]
    sh = list(vals)
    r.shuffle(sh)
    orders.append(sh)
    tabs = []
    for i, o in enumerate(orders):
        t = "%s_%d" % (name, i)
        con.execute("create table %s(x)" % t)
        con.executemany("insert into %s values (?)" % t, [(v,) for v in o])
        tabs.append(t)
    return tabs


def main():
    rep = Reporter("exact")
    r = random.Random(SEED)
    con = connect()
    reset = defaults(con)
    data = datasets(r)
    for name, vals in data.items():
        tabs = make_tables(con, name, vals, r)
        nn = [v for v in vals if v is not None]
        refs = {"gpu_sum": ref_sum(vals), "gpu_total": ref_total(vals), "gpu_avg": ref_avg(vals)}
        # self-check of the reference against math.fsum on finite float data
        if nn and all(isinstance(v, float) and math.isfinite(v) for v in nn):
            try:
                fs = fsum_ref(nn)
            except OverflowError:
                fs = None
            if fs is not None and math.isfinite(refs["gpu_sum"]):
                rep.check("%s_reference_fsum" % name, same(fs, refs["gpu_sum"]),
                          "fsum %s vs fraction %s (test bug)" % (show(fs), show(refs["gpu_sum"])))
        for fn, ref in refs.items():
            seen = {}
            for cname, cfg in CONFIGS:
                configure(con, reset + cfg)
                for t in tabs:
                    seen[(cname, t)] = q1(con, "select %s(x) from %s" % (fn, t))
            configure(con, reset)
            first = seen[(CONFIGS[0][0], tabs[0])]
            rep.check("%s_%s_exact" % (name, fn), same(first, ref),
                      "got %s, exact reference %s" % (show(first), show(ref)))
            bad = [(k, show(v)) for k, v in seen.items() if not same(v, first)]
            rep.check("%s_%s_order_config_invariant" % (name, fn), not bad,
                      "first %s; differing: %s" % (show(first), bad[:4]))
    # per-row checks of gpu_avg division rounding on random small sets
    configure(con, reset)
    con.execute("create table avgt(g, x)")
    rows = []
    for g in range(300):
        n = r.randint(1, 9)
        rows += [(g, rnd_double(r, -60, 60) if r.random() < 0.7 else r.randint(-10 ** 15, 10 ** 15))
                 for _ in range(n)]
    con.executemany("insert into avgt values (?, ?)", rows)
    groups = {}
    for g, x in rows:
        groups.setdefault(g, []).append(x)
    for cname, cfg in CONFIGS[:3]:
        configure(con, reset + cfg)
        got = dict((g, (s, t, a)) for g, s, t, a in
                   con.execute("select g, gpu_sum(x), gpu_total(x), gpu_avg(x) from avgt group by g"))
        bad = []
        for g, xs in groups.items():
            exp = (ref_sum(xs), ref_total(xs), ref_avg(xs))
            if not all(same(a, b) for a, b in zip(got.get(g, (None,) * 3), exp)):
                bad.append((g, [show(v) for v in got.get(g, ())], [show(v) for v in exp]))
        rep.check("groups_sum_total_avg_%s" % cname, not bad and len(got) == len(groups),
                  "%d/%d groups differ, e.g. %s" % (len(bad), len(groups), bad[:2]))
    rep.finish()


if __name__ == "__main__":
    main()
