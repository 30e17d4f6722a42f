"""bench_db.py — what the SQL-level benchmarks share: a connection with the
extension loaded and configured, and a table of n generated rows made once
and kept (bench/aggregate_bench.py, bench/cache_bench.py)."""
import sqlite3
import time


def connect(path, lib, config=()):
    """path opened in autocommit, gpuagg loaded, gpuagg_config(name, value)
    applied for each pair of config."""
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(lib)
    for name, value in config:
        con.execute("SELECT gpuagg_config(?, ?)", (name, value))
    return con


def make_table(con, name, columns, n, select, label=None):
    """CREATE TABLE name(columns) with n rows of `select` (an expression list
    over i = 1..n), in one transaction, unless the table exists."""
    if con.execute("SELECT 1 FROM sqlite_schema WHERE name = ?", (name,)).fetchone():
        return
    t0 = time.time()
    con.execute("CREATE TABLE %s(%s)" % (name, columns))
    con.execute("BEGIN")
    con.execute("WITH RECURSIVE gen(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM gen WHERE i < ?) "
                "INSERT INTO %s SELECT %s FROM gen" % (name, select), (n,))
    con.execute("COMMIT")
    print("# made %s: %d rows in %.1f s" % (label or name, n, time.time() - t0), flush=True)
