#!/usr/bin/env node
// test_node.js — gpuagg loaded by better-sqlite3 (its own bundled SQLite),
// and the npm package's query(db, sql, params) and gpu_query_json (issue
// 40, one statement), the package staged from pkg/npm as npm lays it out.
// Prints FAIL lines (PASS with VERBOSE=1) and
//   RESULT node: <p> passed, <f> failed, <s> skipped
// Environment: GPUAGG_LIB (extension path without .so).
'use strict';
const path = require('path');
const fs = require('fs');
const { execFileSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const LIB = process.env.GPUAGG_LIB || path.join(ROOT, 'libgpuagg');
const VERBOSE = process.env.VERBOSE === '1';
let p = 0, f = 0, s = 0;
function pass(name) { p++; if (VERBOSE) console.log(`PASS [node] ${name}`); }
function fail(name, why) { f++; console.log(`FAIL [node] ${name}: ${why}`); }
function check(name, fn) {
  try {
    const why = fn();
    if (why === true || why === undefined) pass(name); else fail(name, String(why));
  } catch (e) { fail(name, `${e.name}: ${e.message}`); }
}
function finish() {
  console.log(`RESULT node: ${p} passed, ${f} failed, ${s} skipped`);
  process.exit(f ? 1 : 0);
}
// same value and type; doubles bit for bit (Object.is tells -0 from 0)
const same = (a, b) => typeof a === typeof b && Object.is(a, b);
const show = (x) => (typeof x === 'bigint' ? `${x}n` : JSON.stringify(x));

function stagePackage() {
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'gpuagg_npm_query_'));
  fs.copyFileSync(path.join(ROOT, 'pkg', 'npm', 'index.js'), path.join(dir, 'index.js'));
  fs.writeFileSync(path.join(dir, 'package.json'),
                   JSON.stringify({ name: 'gpuagg', main: 'index.js', os: ['linux'], cpu: [process.arch] }));
  fs.symlinkSync(path.resolve(LIB + '.so'), path.join(dir, 'libgpuagg.so'));
  return dir;
}
const sameRows = (a, b) => a.length === b.length &&
  a.every((r, i) => r.length === b[i].length && r.every((x, j) => same(x, b[i][j])));
let pkg = null;
let pkgDir = null;
try { pkgDir = stagePackage(); pkg = require(pkgDir); } catch (e) { fail('package_staged', e.message); }
// Without better-sqlite3 too: query() against a stub database that records
// the SQL it is sent (the package needs only prepare/get/all/exec).
function stubDb(hidden) {
  const log = [];
  const tables = new Map();
  return {
    log,
    exec(sql) {
      log.push(sql);
      const m = /^CREATE VIRTUAL TABLE temp\."([^"]+)" USING (.*)$/s.exec(sql);
      if (m) tables.set(m[1], `CREATE VIRTUAL TABLE "${m[1]}" USING ${m[2]}`);
    },
    prepare(sql) {
      return {
        get: (name) => (/sqlite_schema/.test(sql) && tables.has(name) ? { sql: tables.get(name) } : undefined),
        all: (...args) => { log.push([sql, args]); return /pragma_table_xinfo/.test(sql) ? hidden.map((n) => ({ name: n })) : []; },
      };
    },
  };
}
if (pkg) {
  const crypto = require('crypto');
  check('stub_quoting', () => {
    const text = "SELECT k, sum(x) FROM t WHERE k <> 'it''s' AND j = '\\' GROUP BY k";
    const d = stubDb(['?1']);
    pkg.query(d, text, [5]);
    const name = 'gpuagg_q_' + crypto.createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
    const want = `CREATE VIRTUAL TABLE temp."${name}" USING gpu_query('SELECT k, sum(x) FROM t WHERE k <> ''it''''s'' AND j = ''\\'' GROUP BY k')`;
    const last = d.log[d.log.length - 1];
    return (d.log[0] === want && last[0] === `SELECT * FROM temp."${name}"(?)` && JSON.stringify(last[1]) === '[5]') ||
      show(d.log); });
  check('stub_reuse', () => {
    const d = stubDb([]);
    pkg.query(d, 'SELECT count(*) FROM t');
    pkg.query(d, 'SELECT count(*) FROM t');
    return d.log.filter((x) => typeof x === 'string').length === 1 || show(d.log); });
  check('stub_param_count', () => {
    const d = stubDb(['?1', '?2']);
    for (const args of [[1], [1, 2, 3]]) {
      try {
        pkg.query(d, 'SELECT count(*) FROM t WHERE a > ?1 AND b < ?2', args);
        return `no error for ${show(args)}`;
      } catch (e) {
        if (!(e instanceof RangeError) || !e.message.startsWith('gpuagg.query: the text takes 2 parameters (?1, ?2)')) return e.message;
      }
    }
    return true; });
}

let Database;
try {
  Database = require('better-sqlite3');
} catch (e) {
  s++;
  console.log(`SKIP: [node] better-sqlite3's checks (better-sqlite3 not installed: make test-hosts installs it)`);
  if (pkgDir) fs.rmSync(pkgDir, { recursive: true, force: true });
  finish();
}
const version = require('better-sqlite3/package.json').version;

function open() {
  const db = new Database(':memory:');
  db.loadExtension(LIB);
  return db;
}
let db;
try { db = open(); } catch (e) { fail('load', e.message); finish(); }
pass('load');
console.log(`# node ${process.version}, better-sqlite3 ${version}, ` +
            `SQLite ${db.prepare('SELECT sqlite_version()').pluck().get()}, ${LIB}.so`);

function fill(xs) {
  db.exec('DROP TABLE IF EXISTS v; CREATE TABLE v(k INTEGER PRIMARY KEY, x)');
  const ins = db.prepare('INSERT INTO v(x) VALUES (?)');
  db.transaction(() => { for (const x of xs) ins.run(x); })();
}
const one = (sql, big = false) => db.prepare(sql).safeIntegers(big).raw().get();

check('load_full_path', () => { const d = new Database(':memory:'); d.loadExtension(LIB + '.so');
  return d.prepare('SELECT gpuagg_version()').pluck().get() === one('SELECT gpuagg_version()')[0]; });
check('load_twice', () => { db.loadExtension(LIB); return same(one('SELECT gpu_sum(1.5)')[0], 1.5); });
check('version', () => /^\d+\.\d+\.\d+$/.test(one('SELECT gpuagg_version()')[0]) || one('SELECT gpuagg_version()'));
// (sum() gives 0.0 before SQLite 3.43 and 1.0 after: 3.43 made it compensated)
check('cancel', () => { fill([1e100, 1.0, -1e100]); const r = one('SELECT gpu_sum(x), typeof(gpu_sum(x)) FROM v');
  return (same(r[0], 1) && r[1] === 'real') || show(r); });
check('tenth', () => { fill(Array(10).fill(0.1)); const r = one('SELECT gpu_sum(x), gpu_total(x) FROM v');
  return (r[0] === 1 && r[1] === 1) || show(r); });
check('int_exact_bigint', () => { fill([9223372036854775807n, 1n, -1n]);
  const r = one('SELECT gpu_sum(x), typeof(gpu_sum(x)) FROM v', true);
  return (r[0] === 9223372036854775807n && r[1] === 'integer') || show(r); });
check('int_overflow', () => { fill([9223372036854775807n, 1n]);
  try { return `no error: ${show(one('SELECT gpu_sum(x) FROM v', true))}`; }
  catch (e) { return /integer overflow/.test(e.message) || e.message; } });
check('big_int_plus_real', () => { fill([9007199254740993n, 1.0]);
  const r = one('SELECT gpu_sum(x) FROM v'); return r[0] === 9007199254740994 || show(r); });
check('empty', () => { fill([null]);
  const r = one('SELECT gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_max(x) FROM v');
  return (r[0] === null && r[1] === 0 && r[2] === null && r[3] === null) || show(r); });
check('max_typeof', () => {
  for (const [xs, want] of [[[5n, 5.0], [5n, 'integer']], [[5.0, 5n], [5n, 'real']],
                            [[9007199254740992.0, 9007199254740993n], [9007199254740993n, 'integer']]]) {
    fill(xs);
    const r = one('SELECT gpu_max(x), typeof(gpu_max(x)) FROM v', true);
    // safeIntegers returns BigInt for INTEGER only; a REAL 5.0 is the number 5
    const w0 = want[1] === 'real' ? Number(want[0]) : want[0];
    if (r[0] !== w0 || r[1] !== want[1]) return `${show(xs)} -> ${show(r)}`;
  }
  return true; });
check('max_text_blob', () => { fill([1, 'abc', Buffer.from([0, 1]), 'abd', 7.5]);
  const r = one('SELECT gpu_max(x), max(x), gpu_min(x), min(x) FROM v');
  return (Buffer.isBuffer(r[0]) && r[0].equals(r[1]) && r[2] === r[3] && r[2] === 1) || show(r); });
check('params_bound', () => { const r = db.prepare(
  'SELECT gpu_sum(x) FROM (SELECT ? AS x UNION ALL SELECT ? UNION ALL SELECT ?)').pluck().get(1e100, 1, -1e100);
  return r === 1 || show(r); });
check('window_sliding', () => { fill([1e100, 1.0, 2.0, 3n, 4n]);
  const r = db.prepare('SELECT gpu_sum(x) OVER w, typeof(gpu_sum(x) OVER w) FROM v ' +
    'WINDOW w AS (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) ORDER BY k').raw().all();
  const want = [[1e100, 'real'], [1e100, 'real'], [3, 'real'], [5, 'real'], [7, 'integer']];
  return JSON.stringify(r) === JSON.stringify(want) || show(r); });
check('window_max', () => { const xs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]; fill(xs);
  const r = db.prepare('SELECT gpu_max(x) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) ' +
    'FROM v ORDER BY k').pluck().all();
  const want = xs.map((_, i) => Math.max(...xs.slice(Math.max(0, i - 2), i + 1)));
  return JSON.stringify(r) === JSON.stringify(want) || show(r); });
check('many_rows', () => {
  // 300000 values over a wide range, against their exact sum in BigInt
  // fixed point (every x is a multiple of 2^-20); Number(BigInt) rounds to
  // nearest, ties to even, and the division by 2^20 is exact
  const xs = []; let exact = 0n, seed = 12345;
  for (let i = 0; i < 300000; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const x = ((seed % 2000001) - 1000000) * 2 ** ((seed % 41) - 20);
    xs.push(x); exact += BigInt(x * 2 ** 20);
  }
  fill(xs);
  const g = one('SELECT gpu_sum(x) FROM v')[0];
  const want = Number(exact) / 2 ** 20;
  return g === want || `${g} vs ${want}`; });
check('forced_gpu_same', () => {
  const base = one('SELECT gpu_sum(x), gpu_max(x), gpu_avg(x) FROM v');
  db.prepare("SELECT gpuagg_config('device', 'gpu')").get();
  db.prepare("SELECT gpuagg_config('cpu_max_rows', 0)").get();
  db.prepare("SELECT gpuagg_config('chunk_bytes', 65536)").get();
  const r = one('SELECT gpu_sum(x), gpu_max(x), gpu_avg(x) FROM v');
  db.prepare("SELECT gpuagg_config('device', 'auto')").get();
  db.prepare("SELECT gpuagg_config('cpu_max_rows', 1000000)").get();
  return JSON.stringify(r) === JSON.stringify(base) || `${show(r)} vs ${show(base)}`; });
check('info_json', () => { const j = JSON.parse(one('SELECT gpuagg_info()')[0]);
  return (j.version === one('SELECT gpuagg_version()')[0] && 'gpu_usable' in j) || JSON.stringify(j).slice(0, 200); });
check('two_connections', () => { const a = open(), b = open();
  const dflt = b.prepare("SELECT gpuagg_config('streams')").pluck().get();
  a.prepare("SELECT gpuagg_config('streams', 3)").get();
  const sa = a.prepare("SELECT gpuagg_config('streams')").pluck().get();
  const sb = b.prepare("SELECT gpuagg_config('streams')").pluck().get();
  a.close();
  const r = b.prepare('SELECT gpu_sum(0.1) FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))').pluck().get();
  b.close();
  return (sa === 3 && sb === dflt && dflt !== 3 && r === 1) || show([sa, sb, dflt, r]); });
check('example', () => {
  const out = execFileSync(process.execPath, [path.join(ROOT, 'examples', 'node_example.js'), LIB],
    { env: { ...process.env, NODE_PATH: path.join(__dirname, 'node_modules') }, encoding: 'utf8' });
  return /gpu_sum\(\) = 1\b/.test(out) || out; });
// ---- issue 40: one statement ----
if (pkg) {
  const qdb = open();
  qdb.exec('CREATE TABLE sales(region TEXT, amount REAL, qty INTEGER)');
  const ins = qdb.prepare('INSERT INTO sales VALUES (?, ?, ?)');
  for (let i = 0; i < 10; i++) ins.run('north', 0.1, 1);
  for (const [a, q] of [[1e100, 2], [1.0, 3], [-1e100, 4]]) ins.run("it's", a, q);
  const tableRows = (text, params = []) => {
    qdb.exec(`CREATE VIRTUAL TABLE temp.ref USING gpu_query('${text.replace(/'/g, "''")}')`);
    const r = qdb.prepare(`SELECT * FROM temp.ref${params.length ? `(${params.map(() => '?').join(', ')})` : ''}`)
      .raw().all(...params);
    qdb.exec('DROP TABLE temp.ref');
    return r;
  };
  const text = "SELECT region, sum(amount) AS s, count(*) FROM sales WHERE region <> 'don''t' AND qty >= ? " +
               'GROUP BY region ORDER BY region';
  check('query_quotes_params', () => {
    const got = pkg.query(qdb, text, [1], { raw: true });
    const want = tableRows(text, [1]);
    return (sameRows(got, want) && got.length === 2 && got[0][0] === "it's" && got[0][1] === 1) ||
      `${show(got)} vs ${show(want)}`; });
  check('query_objects', () => {
    const got = pkg.query(qdb, text, [2]);
    return (got.length === 1 && got[0].region === "it's" && got[0].s === 1 && got[0]['count(*)'] === 3) || show(got); });
  check('query_reuses_table', () => {
    const name = 'gpuagg_q_' + require('crypto').createHash('sha256').update(text).digest('hex').slice(0, 16);
    const sv = qdb.pragma('temp.schema_version', { simple: true });
    pkg.query(qdb, text, [3]);
    const sv2 = qdb.pragma('temp.schema_version', { simple: true });
    const names = qdb.prepare("SELECT name FROM temp.sqlite_schema WHERE name LIKE 'gpuagg_q_%' AND " +
                              "name NOT LIKE '%_groups'").pluck().all();
    return (sv === sv2 && names.length === 1 && names[0] === name && pkg.queryTable(qdb, text) === name) ||
      show([sv, sv2, names, name]); });
  check('query_named', () => {
    const got = pkg.query(qdb, 'SELECT region, sum(qty) FROM sales WHERE qty BETWEEN :lo AND @hi ' +
                          'GROUP BY region ORDER BY region', { lo: 2, hi: 3 }, { raw: true });
    return JSON.stringify(got) === JSON.stringify([["it's", 5]]) || show(got); });
  check('query_safe_integers', () => {
    const got = pkg.query(qdb, 'SELECT sum(qty) FROM sales WHERE qty > ?1', [0], { raw: true, safeIntegers: true });
    return got[0][0] === 19n || show(got); });
  const throwsWith = (fn, kind, start) => {
    try { fn(); } catch (e) { return (e instanceof kind && e.message.startsWith(start)) || `${e.name}: ${e.message}`; }
    return 'no error';
  };
  check('query_count', () => throwsWith(() => pkg.query(qdb, text, [1, 2]), RangeError,
                                        'gpuagg.query: the text takes 1 parameter (?1), got 2'));
  check('query_missing_name', () => throwsWith(() => pkg.query(qdb, 'SELECT count(*) FROM sales WHERE qty > :lo', {}),
                                               RangeError, 'gpuagg.query: no value for the parameter :lo'));
  check('query_grammar', () => throwsWith(() => pkg.query(qdb, 'SELECT region FROM sales'), Error, 'gpu_query: '));
  check('query_nul', () => throwsWith(() => pkg.query(qdb, 'SELECT count(*) FROM sales\0'), Error,
                                      'gpuagg.query: the text holds a NUL'));
  check('gpu_query_json', () => {
    const got = qdb.prepare('SELECT row_json FROM gpu_query_json(?, ?)').pluck().all(text, 1).map((j) => JSON.parse(j));
    const want = tableRows(text, [1]);
    return sameRows(got, want) || `${show(got)} vs ${show(want)}`; });
  qdb.close();
}
if (pkgDir) fs.rmSync(pkgDir, { recursive: true, force: true });
db.close();
finish();
