"""test_chunks.py — max/min ties and positions across chunk boundaries.

gpu_max/gpu_min keep the FIRST of equal values (5 before 5.0, as max() on a
scan does).  The engine cuts the input into chunks and reduces each chunk to a
partial (value, position of its first occurrence); the merge must compare the
positions in the whole stream (chunk base + position in the chunk).  If it
compared the in-chunk positions, 5.0 at row 101 would lose to 5 at row 8193
(position 0 of the second CPU chunk).

For pairs of positions that straddle chunk boundaries (the CPU chunk of 8192
values, and the pinned chunks of the forced configurations), every filler
layout (all INTEGER, all REAL, mixed) and both orders (INTEGER first, REAL
first), each configuration must give what max()/min() give, value AND typeof,
and what "first seen wins" gives in Python.  Windows over the same data:
running frames (the deque built from the kept history chunks) and a sliding
frame holding both rows.

Configurations: default, device=cpu, and forced onto the GPU with 4 KiB and
64 KiB chunks (on a machine without a GPU the forced ones run on the CPU).
"""

import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import (Reporter, connect, first_extreme, same, show, sql_type)  # noqa: E402

ROWS = 10000
CONFIGS = [
    ("default", []),
    ("cpu", [("device", "cpu")]),
    ("forced4k", [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "4096")]),
    ("forced64k", [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")]),
]
# 0-based positions of the two equal values: the rows 101 and 8193
# (two CPU chunks), both sides of the CPU chunk boundary, and pairs across
# the pinned chunk sizes of 4 KiB / 64 KiB chunks (a few hundred and a few
# thousand values; exact caps depend on the partial's size, so a spread).
PAIRS = [(100, 8192), (8191, 8192), (0, 9999), (300, 500), (700, 7000), (5000, 8300)]


def filler(r, layout, sign):
    """A value strictly worse than 5 for max (sign 1) or min (sign -1)."""
    kind = layout if layout != "mixed" else r.choice(["int", "real"])
    if kind == "int":
        v = r.randint(-1000000, 4)
    else:
        v = r.uniform(-1e6, 4.999)
    return v if sign > 0 else 10 - v  # min: values > 5


def main():
    rep = Reporter("chunks")
    r = random.Random(int(os.environ.get("SEED", "8193")))
    tables = []
    for layout in ("int", "real", "mixed"):
        for p, q in PAIRS:
            for first in ("int", "real"):
                for sign, fn in ((1, "max"), (-1, "min")):
                    col = [filler(r, layout, sign) for _ in range(ROWS)]
                    col[p], col[q] = (5, 5.0) if first == "int" else (5.0, 5)
                    tables.append(("t_%s_%d_%d_%s_%s" % (layout, p, q, first, fn), fn, col))
    # one database file, read by a connection per configuration
    tmp = tempfile.mkdtemp(prefix="gpuagg_chunks_")
    path = os.path.join(tmp, "t.db")
    con = connect(path)
    con.execute("begin")
    for name, _, col in tables:
        con.execute("create table %s(id integer primary key, x)" % name)
        con.executemany("insert into %s(x) values (?)" % name, [(v,) for v in col])
    con.execute("commit")
    con.close()
    # references, once per table: whole column, running frame around the
    # pair, sliding frame at rows that hold both values
    probe = set({0, 9999, 9000, 9001} | {i + d for pq in PAIRS for i in pq for d in (-1, 0, 1)
                                           if 0 <= i + d < ROWS})
    slide_rows = sorted({9999, 9000, 9001} | {q for _, q in PAIRS})
    refs = {}
    for name, fn, col in tables:
        sign = 1 if fn == "max" else -1
        run, best = {}, None
        for i, v in enumerate(col):
            best = v if best is None else first_extreme([best, v], sign)
            if i in probe:
                run[i] = best
        slide = {i: first_extreme(col[max(0, i - 8999):i + 1], sign) for i in slide_rows}
        refs[name] = (first_extreme(col, sign), run, slide)
    for cname, cfg in CONFIGS:  # one connection at a time
        con = connect(path, cfg)
        bad_plain, bad_run, bad_slide = [], [], []
        for name, fn, col in tables:
            ref, run, slide = refs[name]
            g, gt, b, bt = con.execute(
                "select gpu_%s(x), typeof(gpu_%s(x)), %s(x), typeof(%s(x)) from %s"
                % (fn, fn, fn, fn, name)).fetchone()
            if not (same(g, ref) and gt == sql_type(ref) and same(g, b) and gt == bt):
                bad_plain.append((name, "gpu", show(g), gt, "builtin", show(b), bt, "ref", show(ref)))
            if "_mixed_" not in name:
                continue  # windows: the mixed layout is enough (and costs time)
            # running frame: the deque is built from the kept history chunks
            got = con.execute("select gpu_%s(x) over (order by id), typeof(gpu_%s(x) over (order by id)) "
                              "from %s order by id" % (fn, fn, name)).fetchall()
            for i, e in run.items():
                if not (len(got) == ROWS and same(got[i][0], e) and got[i][1] == sql_type(e)):
                    bad_run.append((name, i, got[i:i + 1], show(e)))
            # a sliding frame of 9000 rows that holds both equal values
            got = con.execute("select gpu_%s(x) over w, typeof(gpu_%s(x) over w) from %s "
                              "window w as (order by id rows between 8999 preceding and current row) "
                              "order by id" % (fn, fn, name)).fetchall()
            for i, e in slide.items():
                if not (len(got) == ROWS and same(got[i][0], e) and got[i][1] == sql_type(e)):
                    bad_slide.append((name, i, got[i:i + 1], show(e)))
        rep.check("%s_first_seen_across_chunks" % cname, not bad_plain,
                  "%d/%d tables differ, e.g. %s" % (len(bad_plain), len(tables), bad_plain[:2]))
        rep.check("%s_running_window_first_seen" % cname, not bad_run,
                  "%d tables differ, e.g. %s" % (len(bad_run), bad_run[:2]))
        rep.check("%s_sliding_window_first_seen" % cname, not bad_slide,
                  "%d rows differ, e.g. %s" % (len(bad_slide), bad_slide[:2]))
        # the issue's own case, spelled out: 5.0 at row 101, 5 at row 8193
        col = [float(i % 5) if i % 2 else i % 5 for i in range(ROWS)]
        col[100], col[8192] = 5.0, 5
        con.execute("create temp table issue(id integer primary key, x)")
        con.executemany("insert into issue(x) values (?)", [(v,) for v in col])
        g = con.execute("select gpu_max(x), typeof(gpu_max(x)), max(x), typeof(max(x)) from issue").fetchone()
        rep.check("%s_issue_row101_real_row8193_int" % cname,
                  same(g[0], 5.0) and g[1] == "real" and g[2:] == (5.0, "real"), repr(g))
        con.execute("update issue set x = 10 - x")  # now 5.0 and 5 are the minimum
        g = con.execute("select gpu_min(x), typeof(gpu_min(x)), min(x), typeof(min(x)) from issue").fetchone()
        rep.check("%s_issue_min_row101_real_row8193_int" % cname,
                  same(g[0], 5.0) and g[1] == "real" and g[2:] == (5.0, "real"), repr(g))
        con.execute("drop table issue")
        con.close()
    os.remove(path)
    os.rmdir(tmp)
    rep.finish()


if __name__ == "__main__":
    main()
