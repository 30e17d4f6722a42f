"""test_analysts.py — gpuagg from the tools analysts already use (suite
`analysts`, also in make test-hosts): sqlite-utils' CLI with
--load-extension, and pandas.read_sql over a connection that loaded it.
Each tool that is not installed prints a SKIP line (.ci/run installs
Debian's sqlite-utils and python3-pandas).

pandas turns every numeric column into float64 (and a column with NULLs
into float64 with NaN), so the SQL types of gpu_ results are lost there:
the checks compare values, and typeof() read as a column of its own."""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gatest import Reporter, LIB  # noqa: E402


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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.finish()


if __name__ == "__main__":
    main()
