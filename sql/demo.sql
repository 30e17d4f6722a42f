-- gpuagg demo: sum() against gpu_sum() on a 10-million-row table.
-- Run with `make demo` (or: sqlite3 < sql/demo.sql from the repository root).
.load ./libgpuagg
.headers on
.mode box
.print '-- building a 10M-row table t(i INTEGER, r REAL) ...'
CREATE TEMP TABLE t(i INTEGER, r REAL);
INSERT INTO t SELECT (value * 2654435761) % 1000003 - 500000,
                     ((value * 2654435761) % 1000003) * 0.1
FROM generate_series(1, 10000000);

.print '-- where the engine will run (device, usable GPU and why)'
SELECT json_extract(gpuagg_info(), '$.cuda_compiled') AS cuda_compiled,
       json_extract(gpuagg_info(), '$.gpu_usable') AS gpu_usable,
       json_extract(gpuagg_info(), '$.why') AS why,
       json_extract(gpuagg_info(), '$.devices[0].name') AS device;

.timer on
.print '-- integers: both exact'
SELECT sum(i) FROM t;
SELECT gpu_sum(i) FROM t;
.print '-- reals: sum() rounds at every row, gpu_sum() once at the end'
SELECT printf('%!.17g', sum(r)) AS "sum(r)" FROM t;
SELECT printf('%!.17g', gpu_sum(r)) AS "gpu_sum(r)" FROM t;
SELECT max(r), gpu_max(r) FROM t;
.timer off

.print '-- the path the last aggregate took, and its timings'
SELECT json_extract(gpuagg_info(), '$.last') AS last;

.print '-- exactness: ten times 0.1, and cancellation'
-- '%!.17g': without the '!' flag SQLite's printf shows at most 16 significant
-- digits, and sum()'s 0.99999999999999989 would print as 1.0.
SELECT printf('%!.17g', sum(x)) AS sum, printf('%!.17g', gpu_sum(x)) AS gpu_sum
FROM (SELECT 0.1 AS x FROM generate_series(1, 10));
SELECT printf('%!.17g', sum(x)) AS sum, printf('%!.17g', gpu_sum(x)) AS gpu_sum
FROM (SELECT column1 AS x FROM (VALUES (1e100), (1.0), (-1e100)));
.print '-- order independence: INT64_MAX + 1 - 1'
SELECT gpu_sum(x) AS gpu_sum
FROM (SELECT column1 AS x FROM (VALUES (9223372036854775807), (1), (-1)));
