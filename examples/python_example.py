#!/usr/bin/env python3
"""gpuagg from Python, with the standard library's sqlite3 module.

    python3 examples/python_example.py [path/to/libgpuagg]

The extension path may be given without the ".so" suffix (SQLite adds it);
it defaults to $GPUAGG_LIB, then ./libgpuagg.  The interpreter's sqlite3
module must be built with extension loading: Debian's /usr/bin/python3 is;
some self-built ones (pyenv, python.org builds without
--enable-loadable-sqlite-extensions) are not, and then
`enable_load_extension` does not exist.
"""
import os
import sqlite3
import sys

lib = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GPUAGG_LIB", "./libgpuagg")

con = sqlite3.connect(":memory:")
if not hasattr(con, "enable_load_extension"):
    sys.exit("this Python's sqlite3 module cannot load extensions; "
             "try /usr/bin/python3")
con.enable_load_extension(True)   # allow it, load, then forbid it again
con.load_extension(lib)           # entry point sqlite3_gpuagg_init, found from the name
con.enable_load_extension(False)

print("gpuagg", con.execute("SELECT gpuagg_version()").fetchone()[0])

con.execute("CREATE TABLE t(x)")
con.executemany("INSERT INTO t VALUES (?)", [(1e100,), (1.0,), (-1e100,)])
s, g = con.execute("SELECT sum(x), gpu_sum(x) FROM t").fetchone()
print(f"1e100 + 1 - 1e100:  sum() = {s!r}   gpu_sum() = {g!r}")

con.execute("DELETE FROM t")
con.executemany("INSERT INTO t VALUES (?)", [(0.1,)] * 10)
s, g = con.execute("SELECT sum(x), gpu_sum(x) FROM t").fetchone()
print(f"ten times 0.1:      sum() = {s!r}   gpu_sum() = {g!r}")

# Every aggregate is a window function too; a sliding frame stays exact.
rows = con.execute("""
    SELECT v, gpu_sum(v) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
    FROM (SELECT column1 AS k, column2 AS v FROM (VALUES (1, 1e100), (2, 1.0), (3, 2.0)))
""").fetchall()
print("sliding pairs:     ", rows)  # [(1e100, 1e100), (1.0, 1e100), (2.0, 3.0)]

# Where would a large aggregate run?  gpuagg_info() is JSON.
print("gpu usable:        ",
      con.execute("SELECT json_extract(gpuagg_info(), '$.gpu_usable')").fetchone()[0])
con.close()
