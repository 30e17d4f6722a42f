"""test_first_hour.py — what a new user meets in the first hour (suite
`first_hour`):

  join        several gpu_aggregate calls joined in CTEs scan the table
              once per call (gpuagg_info()'s gpu_aggregate.calls and
              .replays), on the serial, parallel and cache paths, with the
              answers of the same query written AS MATERIALIZED; arguments
              that differ per outer row compute again; the next statement
              runs anew; a serial cursor stopped by a LIMIT keeps nothing
  rows        last_scan.rows does not change with LIMIT: the whole count,
              or null where the serial path was stopped before its end
  messages    a list where one expression belongs, in the expression and in
              group_by; gpu_cache('t', 'rowid')
  reload      a failed gpu_cache reload leaves the entry that worked, current
  help        make help names targets that exist
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, LIB, ROOT  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuagg_first_")


def connect(path, threads=2):
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("SELECT gpuagg_config('threads', ?)", (threads,))
    return con


def info(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])


def counts(con):
    g = info(con)["gpu_aggregate"]
    return g["calls"], g["replays"]


def make_db(name, rows=20000):
    path = os.path.join(TMP, name)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, g INTEGER, x REAL, y INTEGER)")
    con.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) "
                "INSERT INTO t SELECT i, i % 100, i * 0.5, i % 7 FROM s", (rows,))
    con.close()
    return path


JOIN = """WITH a AS {m} (SELECT grp, sum FROM gpu_aggregate('t', 'x', NULL, 'g')),
  b AS {m} (SELECT grp, max FROM gpu_aggregate('t', 'y', NULL, 'g')),
  c AS {m} (SELECT grp, avg FROM gpu_aggregate('t', 'x + y', NULL, 'g'))
SELECT grp, sum, max, avg FROM a JOIN b USING (grp) JOIN c USING (grp) ORDER BY grp"""


def section_join(rep):
    path = make_db("join.db")
    for label, threads, cache in (("serial", 1, False), ("parallel", 2, False),
                                  ("cache", 2, True)):
        con = connect(path, threads)
        if cache:
            con.execute("SELECT gpu_cache('t', 'g, x, y')")
        want = con.execute(JOIN.format(m="MATERIALIZED")).fetchall()
        c0, r0 = counts(con)
        got = con.execute(JOIN.format(m="")).fetchall()
        c1, r1 = counts(con)
        rep.check("join_%s_same_answer" % label, got == want and len(got) == 100,
                  "%d rows vs %d" % (len(got), len(want)))
        rep.check("join_%s_one_scan_per_call" % label, c1 - c0 == 3 and r1 - r0 > 0,
                  "calls %d replays %d (%s)" % (c1 - c0, r1 - r0, info(con)["last_scan"]))
        # the next statement runs anew
        con.execute(JOIN.format(m="")).fetchall()
        c2, _ = counts(con)
        rep.check("join_%s_next_statement_anew" % label, c2 - c1 == 3, "calls %d" % (c2 - c1))
        con.close()
    # arguments from the outer row: one computation per distinct value,
    # on the same cursor (a join: xFilter again with other arguments) and
    # in a correlated subquery (a cursor of its own each time)
    con = connect(path, 2)
    con.execute("CREATE TEMP TABLE f(lim INTEGER)")
    con.execute("INSERT INTO f VALUES (10), (20), (30), (20)")
    for label, q in (("join", "SELECT f.lim, a.rows FROM f, gpu_aggregate('t', 'x', "
                              "'id <= ' || f.lim) AS a ORDER BY f.rowid"),
                     ("subquery", "SELECT lim, (SELECT rows FROM gpu_aggregate('t', 'x', "
                                  "'id <= ' || lim)) FROM f ORDER BY f.rowid")):
        c0, _ = counts(con)
        got = con.execute(q).fetchall()
        c1, _ = counts(con)
        rep.check("join_outer_arguments_%s" % label,
                  got == [(10, 10), (20, 20), (30, 30), (20, 20)] and 3 <= c1 - c0 <= 4,
                  "%r calls %d" % (got, c1 - c0))
    # a serial cursor stopped by a LIMIT inside the inner loop keeps nothing:
    # the next outer row computes again, and the answers stay right
    con.execute("SELECT gpuagg_config('threads', 1)")
    q = ("SELECT f.lim, (SELECT grp FROM gpu_aggregate('t', 'x', NULL, 'g') ORDER BY rowid LIMIT 1)"
         " FROM f ORDER BY f.lim")
    got = con.execute(q).fetchall()
    rep.check("join_serial_limit_inner", got == [(10, 0), (20, 0), (20, 0), (30, 0)], repr(got))
    con.close()


def section_rows(rep):
    path = make_db("rows.db")
    for threads in (1, 2):
        con = connect(path, threads)
        con.execute("SELECT * FROM gpu_aggregate('t', 'x', 'y < 3', 'g')").fetchall()
        full = info(con)["last_scan"]["rows"]
        want = con.execute("SELECT count(*) FROM t WHERE y < 3").fetchone()[0]
        rep.check("rows_full_threads%d" % threads, full == want, "%r vs %r" % (full, want))
        con.execute("SELECT * FROM gpu_aggregate('t', 'x', 'y < 3', 'g') LIMIT 2").fetchall()
        ls = info(con)["last_scan"]
        ok = ls["rows"] == want if ls["path"] != "serial" else ls["rows"] is None
        rep.check("rows_limit_threads%d" % threads, ok, repr(ls))
        con.close()


def section_messages(rep):
    con = connect(":memory:")
    con.execute("CREATE TABLE t(a, b, g, h)")

    def err(sql, params=()):
        try:
            con.execute(sql, params).fetchall()
            return None
        except sqlite3.Error as e:
            return str(e)

    got = err("SELECT * FROM gpu_aggregate('t', 'a, b')")
    rep.check("message_expression_list", got is not None and got.startswith(
        "gpu_aggregate: the expression must be one SQL expression, not a list: a, b"), repr(got))
    got = err("SELECT * FROM gpu_aggregate('t', 'a', NULL, 'g, h')")
    rep.check("message_group_by_list", got is not None and got.startswith(
        "gpu_aggregate: group_by must be one SQL expression, not a list: g, h"), repr(got))
    got = err("SELECT * FROM gpu_aggregate('t', 'coalesce(a, b)', 'a IN (1, 2)', 'max(g, h)')")
    rep.check("message_commas_inside_calls_fine", got is None, repr(got))
    for name in ("rowid", "_rowid_", "oid"):
        got = err("SELECT gpu_cache('t', 'a, %s')" % name)
        rep.check("message_cache_%s" % name, got is not None and got.startswith(
            "gpu_cache: %s is the row's key, not a column" % name), repr(got))
    con.close()


def section_reload(rep):
    path = make_db("reload.db", 3000)
    con = connect(path, 2)
    con.execute("ALTER TABLE t ADD COLUMN s")
    con.execute("UPDATE t SET s = CASE WHEN id % 2 THEN 'v' || id ELSE id END")  # TEXT and numbers
    con.execute("SELECT gpu_cache('t', 'x, g')")
    want = con.execute("SELECT sum, max FROM gpu_aggregate('t', 'x')").fetchone()
    rep.check("reload_cached", info(con)["last_scan"]["path"] == "cache", repr(info(con)["last_scan"]))
    for label, args in (("no_such_column", ("t", "x, nope")), ("budget", None)):
        if args is None:
            con.execute("SELECT gpuagg_config('cache_bytes', 1000)")
            args = ("t", "x, g")
        try:
            con.execute("SELECT gpu_cache(?, ?)", args)
            failed = False
        except sqlite3.Error:
            failed = True
        con.execute("SELECT gpuagg_config('cache_bytes', 0)")
        got = con.execute("SELECT sum, max FROM gpu_aggregate('t', 'x')").fetchone()
        ls = info(con)["last_scan"]
        entries = info(con)["cache"]["entries"]
        rep.check("reload_%s_keeps_entry" % label, failed and got == want and ls["path"] == "cache"
                  and len(entries) == 1 and entries[0]["current"] and
                  entries[0]["columns"] == ["x", "g"], "%r %r %r" % (failed, ls, entries))
    # a column of TEXT and numbers loads, marked mixed: queries over it say why
    con.execute("SELECT gpu_cache('t', 'x, s')")
    got = con.execute("SELECT count FROM gpu_aggregate('t', 's')").fetchone()
    ls = info(con)["last_scan"]
    rep.check("reload_mixed_column", got == con.execute("SELECT count(s) FROM t").fetchone()
              and ls["path"] != "cache" and "holds TEXT and numbers" in ls["why"] and
              info(con)["cache"]["entries"][0]["mixed"] == ["s"], "%r %r" % (got, ls))
    # a reload that works replaces it
    con.execute("SELECT gpu_cache('t', 'x')")
    entries = info(con)["cache"]["entries"]
    rep.check("reload_ok_replaces", len(entries) == 1 and entries[0]["columns"] == ["x"],
              repr(entries))
    con.close()


def section_help(rep):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # (make test-asan)
    p = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    targets = [line.split()[1] for line in p.stdout.splitlines()
               if line.startswith("  make ") and len(line.split()) > 1]
    rep.check("help_lists_targets", p.returncode == 0 and "test" in targets and len(targets) >= 15,
              p.stdout + p.stderr)
    missing = []
    for t in targets:
        q = subprocess.run(["make", "-n", "-s", "--no-print-directory", t], cwd=ROOT,
                           capture_output=True, text=True, env=env)
        if "No rule to make target" in q.stderr:
            missing.append(t)
    rep.check("help_targets_exist", not missing, repr(missing))


def main():
    rep = Reporter("first_hour")
    for section in (section_join, section_rows, section_messages, section_reload, section_help):
        section(rep)
    rep.finish()


if __name__ == "__main__":
    main()
