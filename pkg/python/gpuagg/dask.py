"""gpuagg.dask — one exact gpu_query over many SQLite files, on a Dask cluster.

    from dask.distributed import Client
    import gpuagg.dask
    client = Client("tcp://scheduler:8786")        # or Client() for a local cluster
    rows = gpuagg.dask.query(client, files, '''
        SELECT region, sum(amount) AS revenue, avg(price), count(*) FROM sales
         WHERE day >= ?1 GROUP BY region ORDER BY revenue DESC LIMIT 10''',
        params=("2026-01-01",))

The rows equal, value and type, those of the same text with gpu_ aggregates
over one table holding every file's rows, file after file in list order and
each file's in rowid order (docs/many_files.md).  How:

  1. One task per file opens it read-only on a worker that has it, loads
     gpuagg from the installed package, and computes the file's partial
     (SQL gpu_query_partial: per group the keys and one exact state per
     aggregate argument, by gpuagg's parallel scan on the worker's cores).
  2. Dask's own tree reduction (dask.bag reduction, split_every partials
     at a time) merges them with gpu_query_merge in an in-memory SQLite,
     always in file order, whatever order the tasks finish in.
  Date and time functions over columns read one statement time in every
  file's task: the client pins it when the query starts (or takes now=) and
  ships it to each task (gpuagg_config 'partial_now'), so a row holding
  'now' reads the same time in every file.  A text whose per-file parts may
  apply 'localtime' or 'utc' is refused: those follow each process's TZ.
  3. The client finishes the last partial with gpu_query (select list,
     HAVING, ORDER BY, LIMIT) in an in-memory SQLite that declares the table
     (a join: every table of the join, the fact and its dimensions).
     It declares them itself from the partial's checked parts (quoted names,
     types as plain type names else their affinity, known collations): a
     shard file may be hostile, and no text taken from one ever runs as SQL
     here.

A join (issue 38) runs too, its text naming the fact table
(SELECT /* gpuagg_fact(lineorder) */ ...): each file holds its own
dimensions, so a file's partial is the join within that file, and the rows
equal those of the text over one database whose fact table holds every
file's fact rows, file after file, each joined to the dimension rows of
its own file (docs/many_files.md, "Joins").

A path is opened as exactly the file that was checked to exist: a file:
URI of its absolute, normalised path ("//x" is "/x"), every special
character percent-encoded.

Also a command line:  python -m gpuagg.dask --scheduler ADDR "SQL" FILE...
(CSV on stdout, a progress bar on stderr; python -m gpuagg.dask --help).

dask and distributed are needed by this module only: `import gpuagg` works
without them.
"""

import datetime as _datetime
import functools
import json as _json
import os as _os
import re as _re
import sqlite3 as _sqlite3
import time as _time
import urllib.parse as _urlparse
import uuid

import gpuagg as _gpuagg

__all__ = ["query", "QueryError"]


class QueryError(RuntimeError):
    """A query over many files failed: the message names the file, the worker
    or the text at fault."""


# ---- what runs on the workers ------------------------------------------------


def _where():
    """The worker running this task, for messages ("" off a worker)."""
    try:
        from distributed import get_worker

        return get_worker().address
    except Exception:
        return ""


def _local_path(path):
    """path as the absolute path, links resolved, that is checked and
    opened.  realpath resolves it as Linux does: a leading "//" is "/"
    (abspath and normpath keep it, POSIX leaves it to the system, and a URI
    would read it as an authority), and "link/.." is the link's parent's
    (normpath would read it as ".")."""
    return _os.path.realpath(path)


def _file_uri(path):
    """The file: URI of exactly _local_path(path): no authority ("//host"
    would be one), every character but letters, digits, "/", "-", "_",
    "." and "~" percent-encoded ("?", "#", "%", spaces, quotes)."""
    return "file:" + _urlparse.quote(_os.fsencode(_local_path(path)), safe="/")


def _connect_gpuagg(path=None, immutable=False):
    """A connection (read-only on path, else in memory) with gpuagg loaded;
    QueryError naming the worker when gpuagg cannot be loaded here."""
    if path is None:
        con = _sqlite3.connect(":memory:")
    else:
        uri = "%s?mode=ro%s" % (_file_uri(path), "&immutable=1" if immutable else "")
        con = _sqlite3.connect(uri, uri=True)
    try:
        _gpuagg.load(con)
    except Exception as e:
        con.close()
        raise QueryError(
            "gpuagg.dask: worker %s cannot load gpuagg (%s: %s)"
            % (_where() or "(the client)", type(e).__name__, e)
        ) from None
    return con


def _file_error(path, e):
    return QueryError("gpuagg.dask: %s: %s" % (path, e))


# milliseconds from the Julian epoch to the Unix epoch: SQLite's
# xCurrentTimeInt64 unit (julianday 2440587.5 is 1970-01-01 00:00)
_UNIX_EPOCH_JMS = 210866760000000


def _now_ms(now):
    """The statement time shipped to every task, as gpuagg_config's
    partial_now takes it: ms since the Julian epoch.  now: None (this
    moment), a datetime (naive: UTC) or that integer."""
    if now is None:
        return int(_time.time() * 1000) + _UNIX_EPOCH_JMS
    if isinstance(now, _datetime.datetime):
        if now.tzinfo is None:
            now = now.replace(tzinfo=_datetime.timezone.utc)
        return round(now.timestamp() * 1000) + _UNIX_EPOCH_JMS
    if isinstance(now, int) and not isinstance(now, bool) and now > 0:
        return now
    raise TypeError("gpuagg.dask: now must be a datetime or a positive int (ms since the Julian epoch)")


def _pin(con, now_ms):
    con.execute("SELECT gpuagg_config('partial_now', ?)", (now_ms,))


def _file_partial(index, path, sql, params, immutable, threads, now_ms):
    """The partial of one file, as the one element of a bag partition:
    [(first file, last file, BLOB)]."""
    # the file checked is the one opened (_file_uri: the same path)
    if not _os.path.exists(_local_path(path)):
        raise _file_error(path, "no such file on worker %s" % (_where() or "(local)"))
    try:
        con = _connect_gpuagg(path, immutable)
    except _sqlite3.Error as e:
        raise _file_error(path, e) from None
    try:
        if threads:
            con.execute("SELECT gpuagg_config('threads', ?)", (threads,))
        _pin(con, now_ms)  # the client's one time, in every task
        marks = ",".join("?" * len(params))
        blob = con.execute(
            "SELECT gpu_query_partial(?%s)" % ("," + marks if marks else ""), (sql,) + tuple(params)
        ).fetchone()[0]
    except _sqlite3.Error as e:
        raise _file_error(path, e) from None
    finally:
        con.close()
    return [(index, index, blob)]


def _one(partition):
    """A partition's one partial (bag reduction's perpartition)."""
    items = list(partition)
    if len(items) != 1:  # from_delayed gives one element a file
        raise QueryError("gpuagg.dask: a partition holds %d partials" % len(items))
    return items[0]


def _merge(items, paths):
    """Merge partials (first, last, BLOB) in file order: bag reduction's
    aggregate, at each level of the tree."""
    items = sorted(items, key=lambda it: it[0])
    if len(items) == 1:
        return items[0]
    con = _connect_gpuagg()
    try:
        marks = ",".join("?" * len(items))
        blob = con.execute(
            "SELECT gpu_query_merge(%s)" % marks, tuple(it[2] for it in items)
        ).fetchone()[0]
    except _sqlite3.Error as e:
        raise QueryError("gpuagg.dask: merging %s: %s" % (_name_items(items, str(e), paths), e)) from None
    finally:
        con.close()
    return (items[0][0], items[-1][1], blob)


def _name_items(items, msg, paths):
    """The files that an "argument N" of gpu_query_merge's message covers."""
    import re

    m = re.search(r"argument (\d+)", msg)
    if not m or not (1 <= int(m.group(1)) <= len(items)):
        return "files %s to %s" % (paths[items[0][0]], paths[items[-1][1]])
    lo, hi = items[int(m.group(1)) - 1][:2]
    return paths[lo] if lo == hi else "files %s to %s" % (paths[lo], paths[hi])


def _probe():
    """Run on every worker before the query: gpuagg loads here?  None, or
    the reason it does not."""
    try:
        con = _connect_gpuagg()
    except QueryError as e:
        return str(e).split("cannot load gpuagg ", 1)[-1]
    con.close()
    return None


def _check_text(path, sql, params, immutable, threads, now_ms):
    """gpu_query's own checks of the text, then gpu_query_partial's full
    checks (the path the partial takes, its workers compiling their texts,
    the pinned time), planned only (gpuagg_config partial_check), on the
    first file's table, as a file task would open it.  None, or the
    QueryError's message: returned, never raised, so that a check run on
    a worker leaves no traceback in its log."""
    try:
        con = _connect_gpuagg(path, immutable)
    except (_sqlite3.Error, QueryError) as e:
        return str(e) if isinstance(e, QueryError) else str(_file_error(path, e))
    try:
        con.execute(
            "CREATE VIRTUAL TABLE temp.gpuagg_dask_check USING gpu_query(%s)" % _sql_string(sql)
        )
        con.execute("DROP TABLE temp.gpuagg_dask_check")
        if threads:
            con.execute("SELECT gpuagg_config('threads', ?)", (threads,))
        _pin(con, now_ms)
        con.execute("SELECT gpuagg_config('partial_check', 1)")
        marks = ",".join("?" * len(params))
        con.execute(
            "SELECT gpu_query_partial(?%s)" % ("," + marks if marks else ""), (sql,) + tuple(params)
        ).fetchone()
    except _sqlite3.Error as e:
        if str(e).startswith("gpu_query:"):
            return str(e)
        if str(e).startswith("gpu_query_partial:"):
            return "gpuagg.dask: the text cannot run on %s: %s" % (path, e)
        return str(_file_error(path, e))
    except Exception as e:  # noqa: BLE001 -- returned, see above
        return str(_file_error(path, "%s: %s" % (type(e).__name__, e)))
    finally:
        con.close()
    return None


def _sql_string(s):
    return "'" + s.replace("'", "''") + "'"


# ---- the client --------------------------------------------------------------


_COLLATIONS = ("BINARY", "NOCASE", "RTRIM")
_ENCODINGS = ("UTF-8", "UTF-16le", "UTF-16be")


def _ident(name):
    """name as an SQL identifier, quoted: never anything else."""
    if not isinstance(name, str) or "\0" in name:
        raise ValueError("a name that is not a string")
    return '"' + name.replace('"', '""') + '"'


def _affinity(decl):
    """The name of a declared type's affinity (SQLite's rules, in their
    order): all the finishing table needs of a type that a file declared."""
    t = decl.upper()
    if not t:
        return ""
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def _known(value, allowed, what):
    if value not in allowed:
        raise ValueError("%s %r is none of %s" % (what, value, ", ".join(allowed)))
    return value


# A plain type name as SQLite's grammar has it (words, then "(n)" or
# "(n, m)"), the form in which a partial's header carries a declared type
# (gpu_query_partial_info has checked it, engine/scan/qschema.h rule 1);
# checked again here, with no word that would begin a constraint, before
# it is declared as written: the finish compares declared types, so
# "DOUBLE" or "VARCHAR(10)" must stay as the file spells them.
_NUM = r"[+-]?(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_TYPE = _re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*(?:\s+[A-Za-z_][A-Za-z0-9_]*)*\s*"
                    r"(?:\(\s*%s\s*(?:,\s*%s\s*)?\)\s*)?" % (_NUM, _NUM))
_NOT_TYPE_WORDS = {"AS", "ASC", "AUTOINCREMENT", "CHECK", "COLLATE", "CONFLICT", "CONSTRAINT", "DEFAULT",
                   "DESC", "GENERATED", "HIDDEN", "KEY", "NOT", "NULL", "ON", "PRIMARY", "REFERENCES",
                   "UNIQUE"}


def _type_decl(t):
    """The declared type to write for a header's type t: t itself when it is
    a plain type name, else its affinity's name."""
    words = _re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t)
    if _TYPE.fullmatch(t) and not any(w.upper() in _NOT_TYPE_WORDS for w in words):
        return t.strip()
    return _affinity(t)


def _fold(name):
    """name as SQLite compares table and index names: ASCII letters folded."""
    return "".join(c.lower() if c < "\x80" else c for c in name)


def _table_schema(t, taken):
    """One table's statements (_schema's rules); taken: the index names
    declared so far (one database holds one index of a name)."""
    table = _ident(t["table"])
    cols = []
    for c in t["columns"]:
        d = _ident(c["name"])
        ty = _type_decl(c["type"])
        if c["rowid"] is True:
            ty = "INTEGER PRIMARY KEY"
        if ty:
            d += " " + ty
        coll = _known(c["collation"], _COLLATIONS, "collation")
        if coll != "BINARY":
            d += " COLLATE " + coll
        cols.append(d)
    # a WITHOUT ROWID table (a join's dimension may be one): its key
    key = [_ident(c["name"]) for c in t["columns"] if c.get("key") is True]
    if key:
        cols.append("PRIMARY KEY(%s)" % ", ".join(key))
    out = ["CREATE TABLE %s(%s)%s" % (table, ", ".join(cols), " WITHOUT ROWID" if key else "")]
    for x in t["indexes"]:
        if _fold(x["name"]) in taken:
            continue
        taken.add(_fold(x["name"]))
        parts = ", ".join(
            "%s COLLATE %s%s" % (_ident(k["name"]), _known(k["collation"], _COLLATIONS, "collation"),
                                 " DESC" if k["desc"] is True else "")
            for k in x["columns"])
        out.append("CREATE %sINDEX %s ON %s(%s)" % ("UNIQUE " if x["unique"] is True else "",
                                                    _ident(x["name"]), table, parts))
    return out


def _schema(info):
    """The finishing database's statements, each one statement built here
    from the partial's parts: quoted names, a type as written only when it
    is a plain type name (_type_decl), else its affinity, collations and the
    encoding from a known set.  No text of the partial
    (which a file's header filled) is ever run as SQL.  A join's partial
    (issue 38) declares every table of the join, the fact first ("tables");
    one table's, as before joins, its "table", "columns" and "indexes"."""
    tables = info.get("tables")
    if tables is None:
        tables = [{"table": info["table"], "columns": info["columns"], "indexes": info["indexes"]}]
    if not isinstance(tables, list) or not tables:
        raise ValueError("no tables")
    names = {_fold(t["table"]) for t in tables}
    if len(names) != len(tables):
        raise ValueError("two tables of one name")
    taken = set(names)  # tables and indexes share SQLite's names
    out = []
    for t in tables:
        out += _table_schema(t, taken)
    return out


def finish(blob, sql, params=(), what="the partial"):
    """The rows of sql over a partial (gpu_query's gpuagg_partial column), and
    their column names: ([tuple, ...], [name, ...]).  what names the files
    the partial covers, for errors."""
    con = _connect_gpuagg()
    try:
        info = _json.loads(con.execute("SELECT gpu_query_partial_info(?)", (blob,)).fetchone()[0])
        try:
            enc = _known(info["encoding"], _ENCODINGS, "encoding")
            schema = _schema(info)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise QueryError("gpuagg.dask: %s: a partial whose tables cannot be declared (%s)"
                             % (what, e)) from None
        if enc != "UTF-8":
            con.execute("PRAGMA encoding = '%s'" % enc)
        for stmt in schema:
            con.execute(stmt)  # one statement each: execute() runs no second one
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query(%s)" % _sql_string(sql))
        n = info["params"]
        args = tuple(params) + (None,) * (n - len(params))
        cur = con.execute(
            "SELECT * FROM temp.q(%s) WHERE gpuagg_partial = ?" % ",".join("?" * n), args + (blob,)
        )
        rows = cur.fetchall()
        return rows, [d[0] for d in cur.description]
    except _sqlite3.Error as e:
        raise QueryError("gpuagg.dask: %s: %s" % (what, e)) from None
    finally:
        con.close()


def _covers(item, paths):
    """The files a merged partial (first, last, BLOB) covers, for errors."""
    lo, hi = item[0], item[1]
    return paths[lo] if lo == hi else "files %s to %s" % (paths[lo], paths[hi])


def _file_list(files):
    """[(host or None, path)] in file-list order."""
    if isinstance(files, dict):
        out = []
        for host, paths in files.items():
            if isinstance(paths, (str, bytes, _os.PathLike)):
                raise TypeError("gpuagg.dask: files[%r] must be a list of paths" % (host,))
            out += [(str(host), _os.fspath(p)) for p in paths]
        return out
    if isinstance(files, (str, bytes, _os.PathLike)):
        raise TypeError("gpuagg.dask: files must be a list of paths or a dict {host: [paths]}")
    return [(None, _os.fspath(p)) for p in files]


def _worker_hosts(client):
    from distributed.comm import get_address_host

    return {get_address_host(a) for a in client.scheduler_info()["workers"]}


def _probe_workers(client):
    """QueryError naming the first worker where gpuagg does not load (where
    even this module does not import, client.run returns the exception)."""
    for addr, r in sorted(client.run(_probe, on_error="return").items()):
        if isinstance(r, BaseException):
            r = "(%s: %s)" % (type(r).__name__, r)
        if r is not None:
            raise QueryError("gpuagg.dask: worker %s cannot load gpuagg %s" % (addr, r))


def build(client, files, sql, params=(), *, immutable=False, threads=None, split_every=8,
          now=None):
    """The Dask graph of the query's merged partial (a delayed of (first
    file, last file, BLOB)) and the file list, after the checks that run
    before any file is scanned."""
    import dask
    import dask.bag as db

    fl = _file_list(files)
    if not fl:
        raise QueryError("gpuagg.dask: no files")
    params = tuple(params)
    if not isinstance(sql, str):
        raise TypeError("gpuagg.dask: the query must be a str")
    if not client.scheduler_info()["workers"]:
        raise QueryError("gpuagg.dask: the cluster has no workers")
    hosts = _worker_hosts(client)
    for host, path in fl:
        if host is not None and host not in hosts:
            raise QueryError(
                "gpuagg.dask: no worker runs on host %s, which holds %s (workers on: %s)"
                % (host, path, ", ".join(sorted(hosts)))
            )
    now_ms = _now_ms(now)  # one statement time for every task
    _probe_workers(client)
    # the text: gpu_query's own errors and gpu_query_partial's path before
    # any file is scanned, on the first file (here when this process can
    # read it, else on its host)
    host0, path0 = fl[0]
    if host0 is None and _os.path.exists(_local_path(path0)):
        err = _check_text(path0, sql, params, immutable, threads, now_ms)
    else:  # a file on the workers' side only
        fut = client.submit(
            _check_text, path0, sql, params, immutable, threads, now_ms, pure=False,
            workers=[host0] if host0 else None, allow_other_workers=False,
        )
        err = fut.result()
    if err:
        raise QueryError(err)
    paths = [p for _, p in fl]
    # a key of its own each call: a file may change between two calls
    token = uuid.uuid4().hex
    parts = []
    for i, (host, path) in enumerate(fl):
        # pinned by host, never by worker address: a restarted worker comes
        # back on another port, and a task pinned to the old one would wait
        # for good
        with dask.annotate(**({"workers": [host], "allow_other_workers": False} if host else {})):
            parts.append(
                dask.delayed(_file_partial, pure=False)(
                    i, path, sql, params, immutable, threads, now_ms,
                    dask_key_name="gpuagg-file-%d-%s" % (i, token),
                )
            )
    bag = db.from_delayed(parts)
    merged = bag.reduction(
        _one, functools.partial(_merge, paths=paths), split_every=split_every,
        name="gpuagg-merge-%s" % token,
    )
    return merged, paths


def _killed(e, paths):
    """KilledWorker as QueryError naming the file."""
    key = str(getattr(e, "task", "") or (e.args[0] if e.args else ""))
    import re

    m = re.search(r"gpuagg-file-(\d+)-", key)
    what = paths[int(m.group(1))] if m else "a merge step"
    return QueryError(
        "gpuagg.dask: %s: the workers running it died too often "
        "(distributed.scheduler.allowed-failures): %s" % (what, e)
    )


def query(client, files, sql, params=(), *, as_pandas=False, immutable=False,
          threads=None, split_every=8, now=None):
    """The rows of sql (gpu_query's grammar) over the table in every file.

    client       a dask.distributed Client
    files        a list of paths that every worker can read, or a dict
                 {host: [paths]} of files that only that host has (tasks are
                 pinned to the host, never to a worker address)
    params       the values of the text's parameters, in order
    as_pandas    a pandas DataFrame instead of a list of tuples
    immutable    open the files with immutable=1 (read-only media; nobody
                 may change them meanwhile), else mode=ro
    threads      gpuagg's threads per file scan (None: its default, one per
                 CPU of the worker's machine)
    split_every  partials merged per step of the tree
    now          the statement time that date and time functions read for a
                 row holding 'now', the same in every file's task: None (the
                 client's time when the query starts), a datetime (naive:
                 UTC) or ms since the Julian epoch

    Raises QueryError naming the file (missing, unreadable, corrupt, a
    column missing, its workers killed too often), the worker (gpuagg not
    loadable there) or the text (gpu_query's own error, before any file is
    scanned: one the file tasks could not run, found on the first file with
    gpu_query_partial's own checks)."""
    from distributed.scheduler import KilledWorker

    merged, paths = build(client, files, sql, params, immutable=immutable,
                          threads=threads, split_every=split_every, now=now)
    try:
        item = client.compute(merged, optimize_graph=False).result()
    except KilledWorker as e:
        raise _killed(e, paths) from None
    rows, names = finish(item[2], sql, tuple(params), _covers(item, paths))
    if as_pandas:
        import pandas

        return pandas.DataFrame.from_records(rows, columns=names)
    return rows


# ---- python -m gpuagg.dask ---------------------------------------------------


def _param(text):
    """A --param value: a JSON number, string or null, else the text."""
    try:
        v = _json.loads(text)
    except ValueError:
        return text
    return v if v is None or isinstance(v, (int, float, str)) else text


def main(argv=None):
    import argparse
    import contextlib
    import csv
    import sys

    ap = argparse.ArgumentParser(
        prog="python -m gpuagg.dask",
        description="One exact gpu_query over many SQLite files on a Dask cluster: "
        "CSV on stdout (a header, then the rows), a progress bar on stderr.",
    )
    ap.add_argument("--scheduler", help="the scheduler's address (default: a local cluster)")
    ap.add_argument("-p", "--param", action="append", default=[], type=_param,
                    help="a parameter's value, in order (JSON: 5, 2.5, \"x\", null; else text)")
    ap.add_argument("--immutable", action="store_true", help="open the files with immutable=1")
    ap.add_argument("--threads", type=int, help="gpuagg threads per file scan")
    ap.add_argument("--split-every", type=int, default=8, help="partials merged per step (8)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("sql")
    ap.add_argument("files", nargs="+", metavar="FILE")
    a = ap.parse_args(argv)

    from distributed import Client, progress
    from distributed.scheduler import KilledWorker

    with contextlib.ExitStack() as stack:
        if a.scheduler:
            client = stack.enter_context(Client(a.scheduler))
        else:
            # the local cluster's own messages go to stderr, as do ours
            with contextlib.redirect_stdout(sys.stderr):
                client = stack.enter_context(Client())
        try:
            merged, paths = build(client, a.files, a.sql, a.param, immutable=a.immutable,
                                  threads=a.threads, split_every=a.split_every)
            fut = client.compute(merged, optimize_graph=False)
            if not a.no_progress:
                # TextProgressBar writes to stdout: the CSV's place
                with contextlib.redirect_stdout(sys.stderr):
                    progress(fut)
                    print(file=sys.stderr)
            try:
                item = fut.result()
            except KilledWorker as e:
                raise _killed(e, paths) from None
            rows, names = finish(item[2], a.sql, tuple(a.param), _covers(item, paths))
        except (QueryError, TypeError) as e:
            print("error: %s" % e, file=sys.stderr)
            return 1
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if v is None else v.hex() if isinstance(v, bytes) else repr(v) if isinstance(v, float) else v for v in r])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
