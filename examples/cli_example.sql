-- gpuagg from the sqlite3 command-line shell.
--
--   sqlite3 < examples/cli_example.sql          (from the repository root)
--
-- `.load` takes the path without ".so"; after `make install` that is
-- /usr/local/lib/sqlite3/libgpuagg.  The shell must allow extensions (the
-- stock sqlite3 CLI does; `.load` fails in builds with
-- SQLITE_OMIT_LOAD_EXTENSION).
.load ./libgpuagg
.mode column
.headers on

SELECT gpuagg_version() AS version;

-- Cancellation: sum() loses the 1.0, gpu_sum() returns the exact sum.
SELECT sum(x) AS "sum", gpu_sum(x) AS "gpu_sum"
FROM (SELECT column1 AS x FROM (VALUES (1e100), (1.0), (-1e100)));

-- Ten times 0.1: sum() rounds at every row, gpu_sum() once.  ('%!.17g':
-- SQLite's printf shows at most 16 digits without the '!' flag.)
SELECT printf('%!.17g', sum(0.1)) AS "sum", printf('%!.17g', gpu_sum(0.1)) AS "gpu_sum"
FROM generate_series(1, 10);

-- Integers stay INTEGER and exact; the overflow check is on the total.
SELECT gpu_sum(x) AS "gpu_sum", typeof(gpu_sum(x)) AS "type"
FROM (SELECT column1 AS x FROM (VALUES (9223372036854775807), (1), (-1)));

-- max keeps the value's type: between equal values the first one wins.
SELECT gpu_max(x) AS "gpu_max", typeof(gpu_max(x)) AS "type"
FROM (SELECT column1 AS x FROM (VALUES (5), (5.0), (2.5)));

-- A one-million-row table; at most cpu_max_rows (1000000) values stay on
-- the CPU, so set it to 0 to send this one to a GPU if there is one.
CREATE TEMP TABLE t AS
  SELECT ((value * 2654435761) % 1000003) * 0.1 AS r FROM generate_series(1, 1000000);
SELECT gpuagg_config('cpu_max_rows', 0) AS "cpu_max_rows";
SELECT printf('%!.17g', sum(r)) AS "sum", printf('%!.17g', gpu_sum(r)) AS "gpu_sum",
       gpu_max(r) AS "gpu_max"
FROM t;
-- Where it ran ("cpu" or "gpu") and how long it took.
SELECT json_extract(gpuagg_info(), '$.last.path') AS "path",
       json_extract(gpuagg_info(), '$.last.total_ms') AS "ms",
       json_extract(gpuagg_info(), '$.why') AS "why no GPU";

-- Every aggregate is a window function, sliding frames included.
SELECT k, x, gpu_sum(x) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS "pair sum"
FROM (SELECT column1 AS k, column2 AS x FROM (VALUES (1, 1e100), (2, 1.0), (3, 2.0)));
