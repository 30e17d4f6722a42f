// Types of the gpuagg npm package (index.js).

/** Anything that loads SQLite extensions by path: a better-sqlite3
 *  Database, node:sqlite's DatabaseSync (opened with allowExtension: true). */
export interface LoadsExtensions {
  loadExtension(path: string, ...rest: any[]): unknown;
}

/** Full path of the bundled libgpuagg.so. Throws on a platform the bundled
 *  build is not for. */
export declare function getLoadablePath(): string;

/** Loads gpuagg into db: db.loadExtension(getLoadablePath()). */
export declare function load(db: LoadsExtensions): void;

/** Anything that prepares and runs SQL: a better-sqlite3 Database,
 *  node:sqlite's DatabaseSync. */
export interface RunsSql {
  prepare(sql: string): any;
  exec(sql: string): unknown;
}

/** Name of the TEMP gpu_query table of the text sql on db (gpuagg_q_ and 16
 *  hex digits of its SHA-256), created with the text quoted on first use. */
export declare function queryTable(db: RunsSql, sql: string): string;

/** Runs one gpu_query text and returns its rows: params an array (?, ?N) or
 *  an object by name (:a, @a, $a). */
export declare function query(db: RunsSql, sql: string,
                              params?: unknown[] | Record<string, unknown>,
                              options?: { raw?: boolean; safeIntegers?: boolean }): any[];
