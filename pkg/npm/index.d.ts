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
