// duckdb_bench.mjs — DuckDB's side of bench/cache_bench.py (issue 11): the
// same values in an in-memory table, sum() and fsum() timed from the SQL
// call to the result rows.
//
//   node bench/duckdb_bench.mjs ROWS THREADS REPS QUERIES
//
// QUERIES: a comma list of a (whole column) and b (y > 500, GROUP BY k).
// Prints one JSON object per line: first {"build_s": s}, then per
// measurement {"query", "agg", "rep", "seconds", "result"}.  Needs the npm
// package @duckdb/node-api (make bench-duckdb-setup puts it in
// bench/duckdb/node_modules; bench/cache_bench.py sets NODE_PATH).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(process.cwd() + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

const [rows, threads, reps, queries] = [
  Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4]),
  (process.argv[5] || 'a,b').split(','),
];
const inst = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await inst.connect();
let t0 = performance.now();
// the formulas of bench/cache_bench.py's table, in exact integer arithmetic
await con.run(`CREATE TABLE c AS SELECT
  CAST(((i * 2654435761) % 1000003) AS DOUBLE) / 1000.0 AS x,
  (i * 7919) % 1000 AS k, (i * 104729) % 1000 AS y
  FROM range(1, ${rows} + 1) t(i)`);
console.log(JSON.stringify({ build_s: (performance.now() - t0) / 1000 }));
const sql = {
  a: (f) => `SELECT ${f}(x) FROM c`,
  b: (f) => `SELECT k, ${f}(x) FROM c WHERE y > 500 GROUP BY k`,
};
for (let rep = 0; rep < reps; rep++) {
  for (const q of queries) {
    for (const agg of ['sum', 'fsum']) {
      t0 = performance.now();
      const r = await con.runAndReadAll(sql[q](agg));
      const got = r.getRows();
      const seconds = (performance.now() - t0) / 1000;
      const result = q === 'a' ? Number(got[0][0])
        : got.reduce((s, row) => s + Number(row[1]), 0);
      console.log(JSON.stringify({ query: q, agg, rep, seconds, result }));
    }
  }
}
