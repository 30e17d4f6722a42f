'use strict';
// gpuagg — the gpuagg SQLite extension as an npm package (the sqlite-vec
// convention):
//   const Database = require('better-sqlite3');
//   const gpuagg = require('gpuagg');
//   const db = new Database(':memory:');
//   gpuagg.load(db);            // or db.loadExtension(gpuagg.getLoadablePath())
//   db.prepare('SELECT gpu_sum(x) FROM t').pluck().get();
// The package holds one Linux build of libgpuagg.so (package.json: os, cpu);
// its description names the glibc it needs.
const fs = require('fs');
const path = require('path');
const { os: OSES, cpu: CPUS } = require('./package.json');

/** Full path of the bundled libgpuagg.so, for any binding's loadExtension(). */
function getLoadablePath() {
  if (!OSES.includes(process.platform) || !CPUS.includes(process.arch)) {
    throw new Error(`gpuagg: this package holds a ${OSES.join('/')}-${CPUS.join('/')} build of ` +
                    `libgpuagg.so, not one for ${process.platform}-${process.arch}`);
  }
  const file = path.join(__dirname, 'libgpuagg.so');
  if (!fs.existsSync(file)) throw new Error(`gpuagg: ${file} is missing (reinstall the package)`);
  return file;
}

/** Load gpuagg into db: anything with loadExtension(path), such as a
 *  better-sqlite3 Database (or node:sqlite's DatabaseSync opened with
 *  allowExtension: true). */
function load(db) {
  db.loadExtension(getLoadablePath());
}

module.exports = { getLoadablePath, load };
