'use strict';
// gpuagg — the gpuagg SQLite extension as an npm package (the sqlite-vec
// convention):
//   const Database = require('better-sqlite3');
//   const gpuagg = require('gpuagg');
//   const db = new Database(':memory:');
//   gpuagg.load(db);            // or db.loadExtension(gpuagg.getLoadablePath())
//   db.prepare('SELECT gpu_sum(x) FROM t').pluck().get();
//   gpuagg.query(db, 'SELECT k, sum(x) FROM t WHERE d >= ? GROUP BY k', ['2026-01-01']);
// The package holds one Linux build of libgpuagg.so (package.json: os, cpu);
// its description names the glibc it needs.
const crypto = require('crypto');
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

// ---- one statement: gpu_query without writing CREATE VIRTUAL TABLE ----

const PREFIX = 'gpuagg_q_';

/** text as one SQL string literal: every quote doubled (SQLite's literals
 *  have no other escape). */
function literal(text) {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The name of the TEMP gpu_query table that runs the text sql on db:
 *  gpuagg_q_ and 16 hex digits of the text's SHA-256 (the same name as the
 *  Python package's), created on the first call with the text quoted here,
 *  reused by every later one while db is open.  A TEMP table of that name
 *  whose schema text is not exactly this one (the caller's own) is never
 *  used: the next name, _1 .. _7, is taken.  Only prepare(), get(), all()
 *  and exec() of db are used: better-sqlite3, or node:sqlite. */
function queryTable(db, sql) {
  if (typeof sql !== 'string') throw new TypeError(`gpuagg.query: sql must be a string, not ${typeof sql}`);
  if (sql.includes('\0')) throw new Error("gpuagg.query: the text holds a NUL character, which ends SQLite's text");
  const h = crypto.createHash('sha256').update(sql, 'utf8').digest('hex').slice(0, 16);
  const lit = literal(sql);
  const look = db.prepare('SELECT sql FROM temp.sqlite_schema WHERE name = ? COLLATE NOCASE');
  for (let k = 0; k < 8; k++) {
    const name = `${PREFIX}${h}${k ? `_${k}` : ''}`;
    const row = look.get(name);
    if (row === undefined) {
      db.exec(`CREATE VIRTUAL TABLE temp."${name}" USING gpu_query(${lit})`);
      return name;
    }
    if (row.sql === `CREATE VIRTUAL TABLE "${name}" USING gpu_query(${lit})`) return name;
  }
  throw new Error(`gpuagg.query: the TEMP tables ${PREFIX}${h} and its seven successors hold other texts; drop them`);
}

/** Run one gpu_query text on db (which loaded gpuagg) and return its rows,
 *  as db's statements return them (better-sqlite3: objects by column name;
 *  options.raw: arrays; options.safeIntegers: INTEGERs as BigInt).  params
 *  binds the text's parameters: an array, one value for each (?, ?N), or an
 *  object by name for :a, @a and $a (keys without the prefix).  A wrong
 *  number of values throws a RangeError naming the parameters. */
function query(db, sql, params = [], options = {}) {
  const name = queryTable(db, sql);
  const names = db.prepare("SELECT name FROM pragma_table_xinfo(?, 'temp') WHERE hidden AND " +
                           "substr(name, 1, 1) IN ('?', ':', '@', '$') ORDER BY cid").all(name).map((r) => r.name);
  let args;
  if (Array.isArray(params)) {
    if (params.length !== names.length) {
      throw new RangeError(`gpuagg.query: the text takes ${names.length} parameter${names.length === 1 ? '' : 's'} ` +
                           `(${names.join(', ') || 'none'}), got ${params.length}`);
    }
    args = params;
  } else if (params !== null && typeof params === 'object') {
    args = names.map((n) => {
      if (n[0] === '?') throw new RangeError(`gpuagg.query: the text numbers its parameter ${n}: pass an array`);
      if (!Object.prototype.hasOwnProperty.call(params, n.slice(1))) {
        throw new RangeError(`gpuagg.query: no value for the parameter ${n} in the object`);
      }
      return params[n.slice(1)];
    });
  } else {
    throw new TypeError('gpuagg.query: params must be an array or an object');
  }
  const st = db.prepare(`SELECT * FROM temp."${name}"${args.length ? `(${args.map(() => '?').join(', ')})` : ''}`);
  if (options.safeIntegers !== undefined && typeof st.safeIntegers === 'function') st.safeIntegers(options.safeIntegers);
  if (options.raw && typeof st.raw === 'function') st.raw(true);
  return st.all(...args);
}

module.exports = { getLoadablePath, load, query, queryTable };
