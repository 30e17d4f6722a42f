"""test_aggregate_writer.py — one snapshot while another PROCESS writes.

A writer process commits in a loop, each commit keeping invariants that a
result mixing two commits would break:
  - x moves between two rows of the same group, one near the start of the
    table and one near the end (sum per group and in all is constant);
  - a row is deleted near the start and inserted again, same x and group,
    at a new rowid past the end (rows per group constant).
Meanwhile this process runs gpu_aggregate (4 threads: about 32 rowid pieces
read by different workers) and a gpu_query of two keys and three measures
over and over; every result must keep every invariant.  Both journal modes: WAL (the snapshot needs the helper's write
lock) and DELETE (the workers' SHARED locks), and WAL read through a mode=ro
connection (wal_ro: a read-only helper cannot lock, it checks that no commit
came while the workers began, issue 36).  A run where the writer did
not commit during the reads, or where no read took the parallel path, would
prove nothing and fails.

In WAL mode the test fails on a broken protocol: with workers that do not
hold one read transaction (each piece its own snapshot) a quarter of the
results broke an invariant.  In rollback-journal mode the caller's own
connection also holds a SHARED lock on the file for the whole call (its
statement reads the schema), which alone keeps writers from committing.

GPUAGG_WRITER_SECONDS (default 3) is the reading time per mode.
"""

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB  # noqa: E402

SECONDS = float(os.environ.get("GPUAGG_WRITER_SECONDS", "3"))
N = 40000
GROUPS = 5

WRITER = r"""
import random, sqlite3, sys, time
path, seconds, n, groups = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
pause = float(sys.argv[5])
con = sqlite3.connect(path, isolation_level=None, timeout=30)
r = random.Random(7)
commits = 0
end = time.time() + seconds
print("ready", flush=True)
while time.time() < end:
    con.execute("BEGIN IMMEDIATE")
    g = r.randrange(groups)
    lo = con.execute("SELECT id FROM t WHERE g = ? ORDER BY id LIMIT 1 OFFSET ?",
                     (g, r.randrange(200))).fetchone()[0]
    hi = con.execute("SELECT id FROM t WHERE g = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                     (g, r.randrange(200))).fetchone()[0]
    d = r.randrange(1, 1000000)
    con.execute("UPDATE t SET x = x - ? WHERE id = ?", (d, lo))
    con.execute("UPDATE t SET x = x + ? WHERE id = ?", (d, hi))
    row = con.execute("SELECT id, x, g FROM t ORDER BY id LIMIT 1 OFFSET ?",
                      (r.randrange(300),)).fetchone()
    con.execute("DELETE FROM t WHERE id = ?", (row[0],))
    con.execute("INSERT INTO t(x, g) VALUES (?, ?)", (row[1], row[2]))
    con.execute("COMMIT")
    commits += 1
    # a writer that never pauses starves every reader of a rollback-journal
    # database (SQLite's busy handler backs off), ours or not
    time.sleep(pause)
print("commits", commits, flush=True)
"""


def run_mode(rep, mode, tmp):
    path = os.path.join(tmp, "w_%s.db" % mode)
    ro = mode == "wal_ro"
    con = sqlite3.connect(path, isolation_level=None, timeout=30)
    con.execute("PRAGMA journal_mode=%s" % ("wal" if ro else mode))
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER, g INTEGER)")
    r = random.Random(11)
    rows = [(i, r.randrange(-10 ** 9, 10 ** 9), i % GROUPS) for i in range(1, N + 1)]
    con.execute("BEGIN")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.execute("COMMIT")
    want_sum = sum(x for _, x, _ in rows)
    want_group = {g: (sum(1 for _, _, h in rows if h == g), sum(x for _, x, h in rows if h == g))
                  for g in range(GROUPS)}
    con.close()

    con = sqlite3.connect("file:%s?mode=ro" % path if ro else path, isolation_level=None,
                          timeout=30, uri=ro)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("SELECT gpuagg_config('threads', 4)")
    # gpu_query (issue 19): two keys (h is a function of g: the groups are
    # g's) and three measures in one pass; d must be 0 and c the rows
    con.execute("CREATE VIRTUAL TABLE temp.wq USING gpu_query('SELECT g, "
                "g % 2 AS h, count(*) AS n, sum(x) AS s, total(x * 2) - "
                "2 * sum(x) AS d, count(x) AS c FROM t GROUP BY g, h')")
    w = subprocess.Popen([sys.executable, "-c", WRITER, path, str(SECONDS + 1), str(N), str(GROUPS),
                          "0.001" if mode == "wal" else "0.004"],
                         stdout=subprocess.PIPE, text=True)
    w.stdout.readline()  # "ready"
    reads = parallel = bad = 0
    first_bad = None
    end = time.time() + SECONDS
    while time.time() < end:
        for grouped in (0, 1, 2):
            try:
                if grouped == 2:
                    got = con.execute("SELECT g, n, s, d, c FROM wq").fetchall()
                    ok = ({g: (n, s_) for g, n, s_, _, _ in got} == want_group and
                          all(d == 0 and c == n for _, n, _, d, c in got))
                elif grouped:
                    got = con.execute("SELECT grp, rows, sum FROM gpu_aggregate('t', 'x', NULL, 'g')"
                                      ).fetchall()
                    ok = {g: (n, s) for g, n, s in got} == want_group
                else:
                    got = con.execute("SELECT rows, sum FROM gpu_aggregate('t', 'x')").fetchall()
                    ok = got == [(N, want_sum)]
            except sqlite3.Error as e:
                got, ok = repr(e), False
            ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
            if os.environ.get("VERBOSE") == "1" and reads < 10:
                print("# %r" % ls)
            reads += 1
            parallel += ls["path"] == "parallel"
            if not ok:
                bad += 1
                first_bad = first_bad or (got, ls)
    out = w.communicate(timeout=60)[0]
    commits = int(out.split()[-1]) if "commits" in out else 0
    con.close()
    rep.check("%s_invariants" % mode, bad == 0,
              "%d of %d results broke an invariant; first: %r" % (bad, reads, first_bad))
    rep.check("%s_writer_committed" % mode, commits >= 20, "%d commits" % commits)
    # a read-only WAL reader takes no lock: its snapshot is checked, and a
    # commit while the workers begin sends it round again (or serial), so
    # its share of parallel reads follows the machine's load; one is enough
    # to show that the check lets a snapshot through
    rep.check("%s_mostly_parallel" % mode, parallel > 0 if mode == "wal_ro" else
              parallel >= reads // 2 and parallel > 0,
              "%d of %d reads parallel (last why: %r)" % (parallel, reads, first_bad))
    if os.environ.get("VERBOSE") == "1":
        print("# %s: %d reads (%d parallel), %d commits" % (mode, reads, parallel, commits))


def main():
    rep = Reporter("aggregate_writer")
    tmp = tempfile.mkdtemp(prefix="gpuagg_writer_")
    for mode in ("wal", "delete", "wal_ro"):
        run_mode(rep, mode, tmp)
    rep.finish()


if __name__ == "__main__":
    main()
