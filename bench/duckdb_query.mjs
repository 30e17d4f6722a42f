// duckdb_query.mjs — DuckDB's side of bench/query_bench.py (issue 19) and of
// bench/lineitem.py --selftest: an in-memory DuckDB that runs what it is sent,
// one request a line, so that the caller can alternate it with its other
// modes rep by rep.
//
//   node bench/duckdb_query.mjs THREADS     (cwd: bench/duckdb, or NODE_PATH)
//
// Requests on stdin, one JSON object a line:
//   {"op": "build", "sql": "CREATE TABLE ..."}   -> {"build_s": s}
//   {"op": "query", "sql": "...", "params": [..]}
//                            -> {"seconds": s, "types": ["DOUBLE", ..], "rows": [[..], ..]}
// `seconds` is from the SQL call to the result rows (runAndReadAll); `?N` in
// the SQL becomes DuckDB's `$N`.  BIGINTs come back as numbers when they
// are safe integers, else as strings (JSON has no int/float: `types` tells).  An error answers {"error": "..."} and
// the server goes on.  Needs the npm package @duckdb/node-api (make
// bench-duckdb-setup puts it in bench/duckdb/node_modules).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const require = createRequire(process.cwd() + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

const threads = Number(process.argv[2] || 2);
const inst = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await inst.connect();

function plain(v) {
  if (typeof v === 'bigint') {
    return v >= Number.MIN_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER ? Number(v) : String(v);
  }
  if (v !== null && typeof v === 'object') return String(v);
  return v;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  try {
    const t0 = performance.now();
    if (req.op === 'build') {
      await con.run(req.sql);
      console.log(JSON.stringify({ build_s: (performance.now() - t0) / 1000 }));
    } else {
      const sql = req.sql.replace(/\?(\d+)/g, '$$$1');
      const r = await con.runAndReadAll(sql, req.params && req.params.length ? req.params : undefined);
      const rows = r.getRows();
      const seconds = (performance.now() - t0) / 1000;
      const types = r.columnTypes().map(String);
      console.log(JSON.stringify({ seconds, types, rows: rows.map((row) => row.map(plain)) }));
    }
  } catch (e) {
    console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  }
}
