#!/usr/bin/env node
// bench/accuracy_node.js DB EXT DEVICE CHUNK_BYTES — the aggregates of
// bench/accuracy.py run by better-sqlite3's own bundled SQLite (newer than
// Debian's: its sum() compensates since 3.43).  For each table v_<name> of DB
// (column x REAL), prints one JSON line: sum, total, gpu_sum (on DEVICE) and
// gpu_sum on the CPU path, each as the double's IEEE-754 bits in hex (exact;
// null for SQL NULL), gpuagg's path, and the SQLite version.
// Run by `bench/accuracy.py --host node`; needs better-sqlite3 (make
// test-hosts installs it into tests/hosts/node/node_modules).
'use strict';
const path = require('path');
const Database = require('better-sqlite3');

const [db, ext, device, chunkBytes] = process.argv.slice(2);
const con = new Database(db, { readonly: true });
con.loadExtension(path.resolve(ext) + '.so');
const bits = (x) => {
  if (x === null) return null;
  const b = Buffer.alloc(8);
  b.writeDoubleBE(Number(x));
  return b.toString('hex');
};
const cfg = (k, v) => con.prepare('SELECT gpuagg_config(?, ?)').pluck().get(k, String(v));
const version = con.prepare('SELECT sqlite_version()').pluck().get();
const tables = con.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'v\\_%' ESCAPE '\\'")
  .pluck().all();
for (const t of tables) {
  cfg('device', device);
  if (device === 'gpu') cfg('cpu_max_rows', 0);
  if (chunkBytes !== '0') cfg('chunk_bytes', chunkBytes);
  const r = con.prepare(`SELECT sum(x), total(x), gpu_sum(x) FROM "${t}"`).raw().get();
  const info = JSON.parse(con.prepare('SELECT gpuagg_info()').pluck().get());
  cfg('device', 'cpu');
  const gc = con.prepare(`SELECT gpu_sum(x) FROM "${t}"`).pluck().get();
  console.log(JSON.stringify({
    table: t, sum: bits(r[0]), total: bits(r[1]), gpu_sum: bits(r[2]), gpu_sum_cpu: bits(gc),
    path: info.last ? info.last.path : null, chunks_gpu: info.last ? info.last.chunks_gpu : null,
    chunk_bytes: info.config.chunk_bytes, sqlite: version,
  }));
}
