"""test_analysts.py — gpuagg from the tools analysts already use (suite
`analysts`, also in make test-hosts): sqlite-utils' CLI with
--load-extension, and pandas.read_sql over a connection that loaded it.
Each tool that is not installed prints a SKIP line (.ci/run installs
Debian's sqlite-utils and python3-pandas).

One statement (issue 40, session 4): sqlite-utils runs a gpu_query text
through gpu_query_json, the text quoted in the SQL or passed as a
parameter (-p), as docs/python_node_cli.md shows them (the doc must hold
the very commands tested here); the Python package's gpuagg.query
(pkg/python/gpuagg, laid out as the wheel lays it) with quotes in the
text, parameters by position and by name, its errors, one TEMP table per
text reused, and as_pandas=True against pandas.read_sql of that table.

pandas turns every numeric column into float64 (and a column with NULLs
into float64 with NaN), so the SQL types of gpu_ results are lost there:
the checks compare values, and typeof() read as a column of its own."""

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gatest import Reporter, LIB, ROOT  # noqa: E402

DOC = os.path.join(ROOT, "docs", "python_node_cli.md")
# the one-statement forms of docs/python_node_cli.md (the doc must hold each)
ONE_SQL = ("SELECT row_json ->> 0 AS region, row_json ->> 1 AS total FROM gpu_query_json('"
           "SELECT region, sum(amount) FROM sales WHERE region <> ''east'' GROUP BY region ORDER BY region')")
ONE_PARAM_SQL = "SELECT row_json FROM gpu_query_json(:q)"
ONE_PARAM_TEXT = "SELECT region, sum(qty) FROM sales WHERE region <> 'east' GROUP BY region ORDER BY region"


def make_db(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE sales(region TEXT, amount REAL, qty INTEGER)")
    con.executemany("INSERT INTO sales VALUES (?, ?, ?)",
                    [("north", 0.1, 1)] * 10 + [("south", 1e100, 2), ("south", 1.0, 3),
                                                ("south", -1e100, 4)])
    con.commit()
    con.close()


def sqlite_utils(rep, db):
    exe = shutil.which("sqlite-utils")
    if not exe:
        rep.skip("sqlite_utils", "sqlite-utils is not installed (apt-get install sqlite-utils)")
        return
    # under make test-asan the tool loads the ASan build with the runtime
    # preloaded; the interpreter's own allocations at exit are no leak of
    # ours (the suites that run in-process check gpuagg's)
    env = dict(os.environ)
    if "LD_PRELOAD" in env:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"

    def run(sql, fmt="--csv"):
        return subprocess.run([exe, "query", db, sql, "--load-extension", LIB + ".so", fmt],
                              capture_output=True, text=True, timeout=120, env=env)
    p = run("SELECT region, gpu_sum(amount) AS s, typeof(gpu_sum(amount)) AS t, sum(amount) AS plain "
            "FROM sales GROUP BY region ORDER BY region")
    want = "region,s,t,plain\nnorth,1.0,real,0.9999999999999999\nsouth,1.0,real,0.0\n"
    rep.check("sqlite_utils_query", p.returncode == 0 and p.stdout.replace("\r", "") == want,
              "rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    p = run("SELECT grp, rows, sum FROM gpu_aggregate('sales', 'qty', NULL, 'region') "
            "ORDER BY grp", fmt="--json-cols")
    rep.check("sqlite_utils_gpu_aggregate", p.returncode == 0 and '"grp": "north"' in p.stdout
              and '"sum": 9' in p.stdout and '"rows": 10' in p.stdout, p.stdout + p.stderr)
    # issue 40: a gpu_query text in the one statement sqlite-utils runs
    # (CREATE VIRTUAL TABLE + SELECT is two: "You can only execute one
    # statement at a time")
    doc = open(DOC).read()
    p = run(ONE_SQL)
    rep.check("sqlite_utils_one_statement", p.returncode == 0 and
              p.stdout.replace("\r", "") == "region,total\nnorth,1.0\nsouth,1.0\n" and ONE_SQL in doc,
              "rc %d out %r err %r (in the doc: %s)" % (p.returncode, p.stdout, p.stderr, ONE_SQL in doc))
    p = subprocess.run([exe, "query", db, ONE_PARAM_SQL, "-p", "q", ONE_PARAM_TEXT,
                        "--load-extension", LIB + ".so"], capture_output=True, text=True, timeout=120, env=env)
    import json
    try:
        got = [json.loads(r["row_json"]) for r in json.loads(p.stdout)]
    except ValueError:
        got = None
    rep.check("sqlite_utils_text_as_parameter", p.returncode == 0 and got == [["north", 10], ["south", 9]] and
              ONE_PARAM_SQL in doc and ONE_PARAM_TEXT in doc,
              "rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))


def pandas_read_sql(rep, db):
    try:
        import pandas as pd
    except ImportError:
        rep.skip("pandas", "pandas is not installed (apt-get install python3-pandas)")
        return
    con = sqlite3.connect(db)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.enable_load_extension(False)
    df = pd.read_sql("SELECT grp, rows, sum, typeof(sum) AS sum_type FROM "
                     "gpu_aggregate('sales', 'amount', NULL, 'region') ORDER BY grp", con)
    rep.check("pandas_values", list(df["grp"]) == ["north", "south"] and
              list(df["sum"]) == [1.0, 1.0] and list(df["rows"]) == [10, 3], repr(df))
    rep.check("pandas_sql_types_as_column", list(df["sum_type"]) == ["real", "real"], repr(df))
    # an INTEGER gpu_sum arrives as a pandas integer, a NULL one as NaN:
    # the column's dtype is pandas', not SQLite's
    df = pd.read_sql("SELECT gpu_sum(qty) AS s FROM sales UNION ALL "
                     "SELECT gpu_sum(NULL) ORDER BY 1", con)
    rep.check("pandas_typeof_lost", str(df["s"].dtype) == "float64" and df["s"].isna().sum() == 1
              and 10 + 9 in list(df["s"]), repr(df))
    con.close()


def install_package(dest):
    """gpuagg as the wheel lays it out (tests/hosts/test_dask.py's way)."""
    pkg = os.path.join(dest, "gpuagg")
    os.makedirs(pkg)
    src = os.path.join(ROOT, "pkg", "python", "gpuagg")
    text = open(os.path.join(src, "__init__.py.in")).read()
    open(os.path.join(pkg, "__init__.py"), "w").write(
        text.replace("@VERSION@", "0+test").replace("@KIND@", "test build"))
    shutil.copy(LIB + ".so", os.path.join(pkg, "libgpuagg.so"))
    sys.path.insert(0, dest)
    import gpuagg
    return gpuagg


def python_query(rep, db, tmp):
    """gpuagg.query: one call per gpu_query text."""
    gpuagg = install_package(os.path.join(tmp, "site"))
    con = sqlite3.connect(db)
    gpuagg.load(con)

    def table_rows(text, params=()):
        con.execute("CREATE VIRTUAL TABLE temp.ref USING gpu_query('%s')" % text.replace("'", "''"))
        rows = con.execute("SELECT * FROM temp.ref(%s)" % ", ".join("?" * len(params)), params).fetchall()
        con.execute("DROP TABLE temp.ref")
        return rows

    def raises(fn, kind, start):
        try:
            fn()
        except kind as e:
            return str(e).startswith(start) or str(e)
        except Exception as e:  # noqa: BLE001
            return "%s: %s" % (type(e).__name__, e)
        return "no error"
    text = ("SELECT region, sum(amount) AS s, count(*) FROM sales WHERE region <> 'it''s' "
            "AND qty >= ? GROUP BY region ORDER BY region")
    want = table_rows(text, (1,))
    got = gpuagg.query(con, text, (1,))
    rep.check("py_query_quotes_params", repr(got) == repr(want) and got[0][1] == 1.0, "%r vs %r" % (got, want))
    name = "gpuagg_q_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    sv = con.execute("PRAGMA temp.schema_version").fetchone()[0]
    got2 = gpuagg.query(con, text, [2])
    sv2 = con.execute("PRAGMA temp.schema_version").fetchone()[0]
    names = [r[0] for r in con.execute("SELECT name FROM temp.sqlite_schema WHERE name LIKE 'gpuagg_q_%' "
                                       "AND name NOT LIKE '%_groups'")]
    rep.check("py_query_reuses_table", names == [name] and sv == sv2 and gpuagg.query_table(con, text) == name and
              repr(got2) == repr(table_rows(text, (2,))), "%r %d %d" % (names, sv, sv2))
    named = "SELECT region, sum(qty) FROM sales WHERE qty BETWEEN :lo AND $hi GROUP BY region ORDER BY region"
    got = gpuagg.query(con, named, {"lo": 2, "hi": 3, "unused": 0})
    rep.check("py_query_named", got == [("south", 5)], repr(got))
    rep.check("py_query_count", raises(lambda: gpuagg.query(con, text, (1, 2)), sqlite3.ProgrammingError,
                                       "gpuagg.query: the text takes 1 parameter (?1), got 2 values") is True,
              raises(lambda: gpuagg.query(con, text, (1, 2)), sqlite3.ProgrammingError, ""))
    rep.check("py_query_missing_name", raises(lambda: gpuagg.query(con, named, {"lo": 1}), sqlite3.ProgrammingError,
                                              "gpuagg.query: no value for the parameter $hi") is True, "")
    rep.check("py_query_grammar", raises(lambda: gpuagg.query(con, "SELECT region FROM sales"),
                                         sqlite3.OperationalError, "gpu_query: ") is True, "")
    rep.check("py_query_nul", raises(lambda: gpuagg.query(con, "SELECT count(*) FROM sales\x00"), ValueError,
                                     "gpuagg.query: the text holds a NUL") is True, "")
    rep.check("py_query_type", raises(lambda: gpuagg.query(con, b"SELECT 1"), TypeError,
                                      "gpuagg.query: sql must be a str") is True, "")
    # the caller's own TEMP table under the name: left alone, the next name used
    own = "SELECT count(*) FROM sales WHERE qty > 2"
    oname = "gpuagg_q_" + hashlib.sha256(own.encode()).hexdigest()[:16]
    con.execute('CREATE TEMP TABLE "%s"(a)' % oname)
    got = gpuagg.query(con, own)
    rep.check("py_query_own_table", got == [(2,)] and gpuagg.query_table(con, own) == oname + "_1" and
              con.execute('SELECT count(*) FROM temp."%s"' % oname).fetchone() == (0,), repr(got))
    try:
        import pandas as pd
    except ImportError:
        rep.skip("py_query_pandas", "pandas is not installed (apt-get install python3-pandas)")
        con.close()
        return
    df = gpuagg.query(con, text, (1,), as_pandas=True)
    ref = pd.read_sql('SELECT * FROM temp."%s"(?)' % gpuagg.query_table(con, text), con, params=(1,))
    rep.check("py_query_pandas", df.equals(ref) and list(df.dtypes) == list(ref.dtypes) and
              list(df.columns) == ["region", "s", "count(*)"] and list(df["s"]) == [1.0, 1.0], "%r\n%r" % (df, ref))
    empty = gpuagg.query(con, text, (99,), as_pandas=True)
    ref = pd.read_sql('SELECT * FROM temp."%s"(?)' % gpuagg.query_table(con, text), con, params=(99,))
    rep.check("py_query_pandas_empty", empty.equals(ref) and len(empty) == 0 and
              list(empty.columns) == list(ref.columns), "%r\n%r" % (empty, ref))
    con.close()


def main():
    # Under make test-asan: pandas and sqlite-utils leave the interpreter's
    # objects allocated at exit, which LeakSanitizer would report (they are
    # not gpuagg's: every other suite checks gpuagg's leaks in-process), so
    # this suite runs again with leak detection off (addresses still
    # checked).
    if "libasan" in os.environ.get("LD_PRELOAD", "") and \
            "detect_leaks=0" not in os.environ.get("ASAN_OPTIONS", ""):
        env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    rep = Reporter("analysts")
    tmp = tempfile.mkdtemp(prefix="gpuagg_analysts_")
    try:
        db = os.path.join(tmp, "sales.db")
        make_db(db)
        sqlite_utils(rep, db)
        pandas_read_sql(rep, db)
        python_query(rep, db, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.finish()


if __name__ == "__main__":
    main()
