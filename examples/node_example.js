#!/usr/bin/env node
// gpuagg from Node.js with better-sqlite3.
//
//   npm install better-sqlite3@12     (12.x for Node 20; 13.x needs Node 22)
//   node examples/node_example.js [path/to/libgpuagg.so]
//
// better-sqlite3 carries its own SQLite; the extension works with it because
// it calls SQLite only through the API pointer that sqlite3_load_extension
// hands it.  The path defaults to $GPUAGG_LIB, then ./libgpuagg (SQLite adds
// ".so" when the file without it does not exist).
'use strict';
const Database = require('better-sqlite3');

const lib = process.argv[2] || process.env.GPUAGG_LIB || './libgpuagg';
const db = new Database(':memory:');
db.loadExtension(lib); // entry point sqlite3_gpuagg_init, found from the name

console.log('gpuagg', db.prepare('SELECT gpuagg_version()').pluck().get(),
            'in SQLite', db.prepare('SELECT sqlite_version()').pluck().get());

db.exec('CREATE TABLE t(x)');
const insert = db.prepare('INSERT INTO t VALUES (?)');
const fill = db.transaction((xs) => { db.exec('DELETE FROM t'); for (const x of xs) insert.run(x); });

fill([1e100, 1.0, -1e100]);
let r = db.prepare('SELECT sum(x) AS s, gpu_sum(x) AS g FROM t').get();
console.log(`1e100 + 1 - 1e100:  sum() = ${r.s}   gpu_sum() = ${r.g}`);

fill(Array(10).fill(0.1));
r = db.prepare('SELECT sum(x) AS s, gpu_sum(x) AS g FROM t').get();
console.log(`ten times 0.1:      sum() = ${r.s}   gpu_sum() = ${r.g}`);

// 64-bit integers: ask for BigInt, or values above 2^53 are rounded by JS.
fill([9223372036854775807n, 1n, -1n]);
r = db.prepare('SELECT gpu_sum(x) AS g, typeof(gpu_sum(x)) AS t FROM t').safeIntegers(true).get();
console.log(`INT64_MAX + 1 - 1:  gpu_sum() = ${r.g} (${r.t})`);

// Every aggregate is a window function, sliding frames included.
fill([1e100, 1.0, 2.0]);
const pairs = db.prepare(
  'SELECT gpu_sum(x) OVER (ORDER BY rowid ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t')
  .pluck().all();
console.log('sliding pairs:     ', pairs); // [ 1e+100, 1e+100, 3 ]

console.log('gpu usable:        ',
            db.prepare("SELECT json_extract(gpuagg_info(), '$.gpu_usable')").pluck().get());
db.close();
