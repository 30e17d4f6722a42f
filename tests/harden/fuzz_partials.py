"""fuzz_partials.py — the partial and state BLOB fuzzer (make fuzz-partials;
issue 36).  Run with the ASan+UBSan build of the extension, UBSan
recoverable (mk/harden.mk): a memory error aborts the run, a UBSan report is
logged and the run goes on, failing at its end.

    fuzz_partials.py [--seconds N] [--cases N] [--seed N] [--out DIR]

Seeds: valid partials (gpu_query_partial of two files, and their
gpu_query_merge) of texts with INTEGER, REAL, TEXT (NOCASE), BLOB and
computed keys, carried columns, parameters, an ungrouped text, a UTF-16
database and a join (its dimensions' tables in the header, one WITHOUT
ROWID, one indexed: qpartial.h rule 7); valid state BLOBs of
gpu_sum/avg/max/min_state; variances (issue 39: Σx² windows,
qpartial.h rule 8) and gpu_var_state; medians and percentiles (issue 39:
every value of a group, qpartial.h rule 9).

Mutants of a seed: bit flips, interesting bytes, truncations, extensions,
edits of the format's length, count and row fields (found by parsing the
seed: engine/scan/qpartial.h rule 1 and the state header's rows), region
deletions and duplications, and splices of two valid BLOBs (of one text or
of two); one to three of them a case.

A partial mutant M of text T (valid seed P of T) goes through
gpu_query_partial_info(M), gpu_query_merge(M), gpu_query_merge(P, M) and
T's gpuagg_partial column (the finish).  "Accepted" means: gpu_query_merge(M)
returns a BLOB.  Checked at every case:
  1. every error starts with its function's name ("gpu_query_merge: ",
     "gpu_query_partial_info: ", "gpu_query: ");
  2. the three readers agree: info fails => merge and finish fail; the
     finish answers => M is accepted;
  3. an accepted M re-encodes: R = gpu_query_merge(M) is accepted, re-encodes
     to itself (gpu_query_merge(R) == R, byte for byte), its info's rows
     equal M's, and the finish of R answers exactly what the finish of M
     answers (rows, values, typeof, REALs by their bits; or the same
     error).  A rejected M is never an answer.
A state mutant S goes through every gpu_<agg>_merge: an error names the
function (gpu_sum_merge may also say "integer overflow", as gpu_sum does),
the sum family (sum, total, avg) accepts exactly the same BLOBs, and an
accepted max or min state merged with itself gives itself; gpu_var_merge
(issue 39) names itself, its forms agree on accepting, an accepted state
re-encodes to itself and twice its rows keep its population forms' bits.
A mismatch is written to OUT/fail-N.bin (+ .txt); the case being run is in
OUT/case.bin (an ASan abort leaves it there).  The process's stderr goes to
OUT/stderr.log: a case after which it grew (a recoverable UBSan report) is
kept as OUT/stderr-case-N.bin.  Exit status 1 when a check failed or
anything was written on stderr.
"""

import argparse
import json
import os
import random
import sqlite3
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(ROOT, "libgpuagg")

SCHEMA = ("CREATE TABLE t(k INTEGER, s TEXT COLLATE NOCASE, b BLOB, x, y REAL, "
          "c TEXT, id INTEGER PRIMARY KEY)")
# issue 38: a join's dimensions (their tables travel in the partial's
# header: qpartial.h rule 7), one of them WITHOUT ROWID, one indexed
DIMS = ["CREATE TABLE d(k INTEGER PRIMARY KEY, g TEXT COLLATE NOCASE, h REAL)",
        "CREATE INDEX d_g ON d(g DESC, h)",
        "CREATE TABLE w(wk TEXT COLLATE RTRIM PRIMARY KEY, wv) WITHOUT ROWID"]
# (text, parameter values, UTF-16)
TEXTS = [
    ("SELECT s, sum(x), max(y), min(c), count(*) FROM t GROUP BY s ORDER BY s", (), False),
    ("SELECT k, b, total(y), avg(x) FROM t WHERE y > ?1 GROUP BY k, b", (0.25,), False),
    ("SELECT sum(x), max(s), min(b), count(*) FROM t", (), False),
    ("SELECT s, c, sum(y) AS v FROM t GROUP BY s, c HAVING count(*) > 1 ORDER BY v", (), False),
    ("SELECT k % 3 AS g, min(b), max(x), sum(k) FROM t WHERE c <> :c GROUP BY g", ("zz",), False),
    ("SELECT s COLLATE BINARY AS u, sum(x), max(c) FROM t GROUP BY u", (), True),
    # issue 37: DISTINCT sets (numbers, NOCASE TEXT) and FILTER
    ("SELECT k % 3 AS g, count(DISTINCT s), sum(DISTINCT y) FILTER (WHERE x > 0), max(DISTINCT s) "
     "FROM t GROUP BY g", (), False),
    # issue 38: a join's partial carries every table of the join
    ("SELECT /* gpuagg_fact(t) */ d.g, sum(t.x), max(w.wv), min(d.h), count(*) FROM t JOIN d ON t.k = d.k "
     "LEFT JOIN w ON t.c = w.wk WHERE d.h > ?1 GROUP BY d.g", (-0.5,), False),
    # issue 39: Σx² windows (qpartial.h rule 8), grouped and ungrouped
    ("SELECT s, gpu_stddev(x), gpu_var_pop(y) FILTER (WHERE k > 0), sum(x) FROM t GROUP BY s", (), False),
    ("SELECT gpu_variance(k), gpu_stddev_pop(y), count(*) FROM t", (), False),
    # issue 39 (session 5): a median's values (qpartial.h rule 9), grouped and ungrouped
    ("SELECT s, gpu_median(y), gpu_percentile_disc(k, 0.25) FILTER (WHERE y > 0), sum(x) FROM t GROUP BY s",
     (), False),
    ("SELECT gpu_percentile(k, 90), gpu_percentile_cont(y, 0.5), count(*) FROM t", (), False),
]
MERGES = ["gpu_sum_merge", "gpu_total_merge", "gpu_avg_merge", "gpu_max_merge", "gpu_min_merge"]
STATES = ["gpu_sum_state(x)", "gpu_avg_state(y)", "gpu_max_state(x)", "gpu_min_state(c)",
          "gpu_max_state(b)", "gpu_min_state(s)", "gpu_var_state(x)", "gpu_var_state(y)",
          "gpu_var_state(k)"]


def connect(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(LIB)
    db.text_factory = bytes  # a mutated TEXT need not be UTF-8
    return db


def value(rnd):
    k = rnd.randrange(9)
    if k == 0:
        return None
    if k == 1:
        return rnd.randrange(-5, 6)
    if k == 2:
        return rnd.choice([2**63 - 1, -2**63, 2**53 + 1, 0, -1])
    if k == 3:
        return rnd.choice([0.1, -0.0, 1e308, -1e308, 5e-324, 1e16, 2.5])
    if k == 4:
        return rnd.uniform(-10, 10)
    if k == 5:
        return rnd.choice(["north", "North", "south ", "", "\u00e9t\u00e9", "12"])
    if k == 6:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(5)))
    if k == 7:
        return float(rnd.randrange(-3, 4))
    return "x" * rnd.randrange(40)


def make_file(path, rnd, utf16):
    db = connect(path)
    if utf16:
        db.execute("PRAGMA encoding = 'UTF-16le'")
    db.execute(SCHEMA)
    for st in DIMS:
        db.execute(st)
    for k in range(-3, 8):
        if rnd.randrange(4):
            db.execute("INSERT INTO d VALUES (?, ?, ?)", (k, rnd.choice(["p", "P", "q", None]),
                                                          rnd.choice([None, rnd.uniform(-1, 1), 2.5])))
    for c in ["a", "B", "zz", "a "]:
        if rnd.randrange(3):
            db.execute("INSERT OR IGNORE INTO w VALUES (?, ?)", (c, value(rnd)))
    for i in range(rnd.randrange(20, 60)):
        db.execute("INSERT INTO t(k, s, b, x, y, c) VALUES (?, ?, ?, ?, ?, ?)",
                   (rnd.randrange(-3, 8), rnd.choice(["north", "North", "south", "east", None, "s\u00fcd"]),
                    rnd.choice([None, b"", b"\x00\x01", b"ab", bytes([rnd.randrange(256)])]),
                    value(rnd), rnd.choice([None, rnd.uniform(-1, 1), 1e300, -0.0]),
                    rnd.choice([None, "a", "B", "zz", "c" * rnd.randrange(30)])))
    db.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    return db


def parse_fields(b):
    """Offsets and sizes of a partial's numeric fields (qpartial.h rule 1):
    counts, lengths, type bytes, rows; and of each state's rows.  Stops
    where the bytes stop making sense (a mutant's seed is always valid)."""
    f = []
    at = [0]

    def take(n, note=True):
        if at[0] + n > len(b):
            raise IndexError
        if note:
            f.append((at[0], n))
        at[0] += n
        return b[at[0] - n:at[0]]

    def u32():
        return struct.unpack("<I", take(4))[0]

    def strv():
        n = u32()
        take(n, False)
        return n
    try:
        take(4, False)
        take(1)
        take(1)
        nk, nc, ns = take(1)[0], take(1)[0], take(1)[0]
        take(nk)
        dist = take(ns)  # version 3: DISTINCT states (issue 37); 0x80: a Σx² (issue 39)
        take(8)  # signature
        u32()  # parameters
        strv()
        for _ in range(u32()):
            strv(), strv(), strv(), take(1)
        for _ in range(u32()):
            strv(), strv()
        for _ in range(u32()):  # version 4: a join's other tables (issue 38)
            strv()
            for _ in range(u32()):
                strv(), strv(), strv(), take(1)
            for _ in range(u32()):
                strv(), strv()
        take(8)  # rows
        ng = struct.unpack("<Q", take(8))[0]
        for _ in range(ng):
            for _ in range(nk + nc):
                t = take(1)[0]
                if t in (1, 2):
                    take(8)
                elif t in (3, 4):
                    strv()
            for _ in range(ns):
                at0 = at[0]
                n = strv()
                f.append((at0 + 4 + 8, 8))  # the fused state's rows
                f.append((at0 + 4 + 16, 8))  # its first count
                del at0, n
            for d in dist:  # the DISTINCT states' sets (qpartial.h rule 6), a median's values (rule 9)
                if d == 0x40:
                    f.append((at[0], 8))  # the values' count
                    take(8 * struct.unpack("<Q", take(8, False))[0], False)
                elif d & 0x7f:
                    for _ in range(u32()):
                        t = take(1)[0]
                        if t in (1, 2):
                            take(8)
                        elif t in (3, 4):
                            strv()
                        take(1)  # the sum's view: type, then its 8 bytes
                        take(8)
            for d in dist:  # the variance states' Σx² (rule 7): lowest digit, digits, u32 each
                if d & 0x80:
                    u32()
                    for _ in range(u32()):
                        take(4)
    except IndexError:
        pass
    return f


U32 = [0, 1, 2, 3, 4, 7, 8, 13, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff]
U64 = [0, 1, 2, 3, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 0x6000000000000000, 2**53]


def mutate(rnd, seed, others, fields):
    b = bytearray(seed)
    for _ in range(rnd.choice([1, 1, 1, 2, 3])):
        op = rnd.randrange(9)
        if not b:
            b = bytearray(rnd.choice(others))
        if op == 0:  # bit flips
            for _ in range(rnd.choice([1, 1, 2, 4])):
                i = rnd.randrange(len(b))
                b[i] ^= 1 << rnd.randrange(8)
        elif op == 1:  # interesting bytes
            i = rnd.randrange(len(b))
            b[i] = rnd.choice([0, 1, 2, 3, 4, 5, 0x7f, 0x80, 0xfe, 0xff, rnd.randrange(256)])
        elif op == 2:  # truncation
            b = b[:rnd.randrange(len(b) + 1)]
        elif op == 3:  # extension
            b += bytes(rnd.randrange(256) for _ in range(rnd.choice([1, 1, 4, 9, 40])))
        elif op in (4, 5) and fields:  # a length, count or rows field
            off, n = rnd.choice(fields)
            if off + n <= len(b):
                if n == 4:
                    v = rnd.choice(U32 + [len(b), len(b) - off, rnd.randrange(2**32)])
                    b[off:off + 4] = struct.pack("<I", v % 2**32)
                elif n == 8:
                    old = struct.unpack("<Q", bytes(b[off:off + 8]))[0]
                    v = rnd.choice(U64 + [old + 1, old - 1, old * 2, rnd.randrange(2**64)])
                    b[off:off + 8] = struct.pack("<Q", v % 2**64)
                else:
                    b[off] = rnd.choice([0, 1, 2, 3, 4, 5, 6, 0xff])
        elif op == 6:  # delete a region
            i = rnd.randrange(len(b))
            del b[i:i + rnd.randrange(1, 40)]
        elif op == 7:  # duplicate a region
            i = rnd.randrange(len(b))
            j = min(len(b), i + rnd.randrange(1, 60))
            b[j:j] = b[i:j]
        else:  # splice of two valid BLOBs
            o = rnd.choice(others)
            i, j = rnd.randrange(len(b) + 1), rnd.randrange(len(o) + 1)
            b = b[:i] + o[j:] if rnd.randrange(2) else b[:i] + o[j:j + rnd.randrange(1, 200)] + b[i:]
    return bytes(b)


class Fuzz:
    def __init__(self, out, seed):
        self.out = out
        self.rnd = random.Random(seed)
        self.fails = 0
        self.tmp = tempfile.mkdtemp(prefix="gpuagg_fuzzp_")
        self.scratch = connect(":memory:")
        self.cases = {"partial": 0, "accepted": 0, "state": 0, "state_accepted": 0}
        self.texts = []
        rnd = random.Random(seed)
        for ti, (text, params, utf16) in enumerate(TEXTS):
            files = [make_file(os.path.join(self.tmp, "f%d_%d.db" % (ti, i)), rnd, utf16) for i in range(2)]
            ph = ",".join("?" * (len(params) + 1))
            parts = [f.execute("SELECT gpu_query_partial(%s)" % ph, (text,) + params).fetchone()[0]
                     for f in files]
            merged = self.scratch.execute("SELECT gpu_query_merge(?, ?)", parts).fetchone()[0]
            info = json.loads(self.scratch.execute("SELECT gpu_query_partial_info(?)", (merged,)).fetchone()[0])
            fin = connect(":memory:")
            if utf16:
                fin.execute("PRAGMA encoding = 'UTF-16le'")
            fin.executescript(info["create"].decode() if isinstance(info["create"], bytes) else info["create"])
            fin.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % text.replace("'", "''"))
            fsql = "SELECT * FROM q(%s) WHERE gpuagg_partial = ?" % ",".join("?" * len(params))
            # the finish's TEXT values tagged, so that an answer whose TEXT
            # became a BLOB (both bytes under connect's factory) differs
            fin.text_factory = lambda b: ("text", b)
            seeds = parts + [merged]
            for p in seeds:  # the seeds themselves hold the oracle
                self.partial_case(ti, p, p, params, fin, fsql)
            self.texts.append((ti, seeds, params, fin, fsql, [parse_fields(p) for p in seeds]))
            for f in files:
                f.close()
        self.states = []
        st = make_file(os.path.join(self.tmp, "states.db"), rnd, False)
        for expr in STATES:
            for (s,) in st.execute("SELECT %s FROM t GROUP BY k" % expr):
                if s is not None:
                    self.states.append(s)
        st.close()
        self.all_partials = [p for t in self.texts for p in t[1]]

    def fail(self, what, blob, detail):
        self.fails += 1
        base = os.path.join(self.out, "fail-%d" % self.fails)
        with open(base + ".bin", "wb") as fh:
            fh.write(blob)
        with open(base + ".txt", "w") as fh:
            fh.write("%s\n%r\n" % (what, detail))
        print("fuzz-partials: FAIL %s: %r (%s.bin)" % (what, detail, base), flush=True)

    @staticmethod
    def run(con, sql, args):
        try:
            return ("ok", con.execute(sql, args).fetchall())
        except sqlite3.Error as e:
            return ("error", str(e))
        except OverflowError as e:  # a value Python cannot hold
            return ("error", "python: %s" % e)

    def named(self, got, prefix, blob, what, also=()):
        if got[0] == "error" and not got[1].startswith(prefix) and got[1] not in also:
            self.fail("%s: an error not naming the function" % what, blob, got[1])

    def partial_case(self, ti, m, seed, params, fin, fsql):
        self.cases["partial"] += 1
        sc = self.scratch
        info = self.run(sc, "SELECT gpu_query_partial_info(?)", (m,))
        merged = self.run(sc, "SELECT gpu_query_merge(?)", (m,))
        both = self.run(sc, "SELECT gpu_query_merge(?, ?)", (seed, m))
        fin_m = self.run(fin, fsql, params + (m,))
        self.named(info, "gpu_query_partial_info: ", m, "info")
        self.named(merged, "gpu_query_merge: ", m, "merge")
        self.named(both, "gpu_query_merge: ", m, "merge(seed, m)")
        self.named(fin_m, "gpu_query: ", m, "finish")
        if info[0] == "error" and (merged[0] == "ok" or fin_m[0] == "ok"):
            self.fail("info refuses what merge or finish takes", m, (info, merged[0], fin_m[0]))
        if fin_m[0] == "ok" and merged[0] != "ok":
            self.fail("the finish answers a partial the merge refuses", m, merged)
        if merged[0] != "ok":
            return
        self.cases["accepted"] += 1
        r = merged[1][0][0]
        again = self.run(sc, "SELECT gpu_query_merge(?)", (r,))
        if again != ("ok", [(r,)]):
            self.fail("the re-encoded partial does not re-encode to itself", m, again[1] if again[0] == "error" else "")
            return
        ir = self.run(sc, "SELECT gpu_query_partial_info(?)", (r,))
        if ir[0] != "ok":
            self.fail("info refuses a partial that the merge wrote", m, ir[1])
        elif info[0] == "ok":
            a, b = json.loads(info[1][0][0]), json.loads(ir[1][0][0])
            if a["rows"] != b["rows"]:
                self.fail("re-encoding changed the rows", m, (a["rows"], b["rows"]))
        fin_r = self.run(fin, fsql, params + (r,))
        if repr(fin_r) != repr(fin_m):
            self.fail("the re-encoded partial answers otherwise", m, (fin_m, fin_r))

    def state_case(self, s):
        self.cases["state"] += 1
        sc = self.scratch
        got = {}
        for fn in MERGES:
            g = self.run(sc, "SELECT %s(s), typeof(%s(s)) FROM (SELECT ? AS s)" % (fn, fn), (s,))
            self.named(g, fn + ": ", s, fn, ("integer overflow",) if fn == "gpu_sum_merge" else ())
            got[fn] = g
        fam = [got[f][0] == "ok" or got[f][1] == "integer overflow" for f in MERGES[:3]]
        if len(set(fam)) != 1:
            self.fail("the sum family disagrees on a state", s, [got[f] for f in MERGES[:3]])
        for fn in MERGES[3:]:
            if got[fn][0] == "ok":
                self.cases["state_accepted"] += 1
                twice = self.run(sc, "SELECT %s(s), typeof(%s(s)) FROM (SELECT ? AS s UNION ALL "
                                     "SELECT ?)" % (fn, fn), (s, s))
                if repr(twice) != repr(got[fn]):
                    self.fail("%s of a state twice is not the state's" % fn, s, (got[fn], twice))
        if any(fam) and any(got[f][0] == "ok" for f in MERGES[:3]):
            self.cases["state_accepted"] += 1
        self.var_case(s)

    def var_case(self, s):
        """issue 39: gpu_var_merge names itself in every error; an accepted
        state re-encodes to itself, answers every form, and merged with
        itself (twice the rows) keeps its population forms' bits."""
        sc = self.scratch
        forms = ("var_samp", "var_pop", "stddev_samp", "stddev_pop", "state")
        got = {f: self.run(sc, "SELECT gpu_var_merge(?, ?)", (s, f)) for f in forms}
        for f in forms:
            self.named(got[f], "gpu_var_merge: ", s, "gpu_var_merge " + f)
        ok = set(g[0] for g in got.values())
        if len(ok) != 1:
            self.fail("gpu_var_merge's forms disagree on a state", s, got)
            return
        if ok != {"ok"}:
            return
        self.cases["state_accepted"] += 1
        r = got["state"][1][0][0]
        if self.run(sc, "SELECT gpu_var_merge(?, 'state')", (r,)) != ("ok", [(r,)]):
            self.fail("a merged variance state does not re-encode to itself", s, r)
        for f in ("var_pop", "stddev_pop"):
            twice = self.run(sc, "SELECT gpu_var_merge(s, ?) FROM (SELECT ? AS s UNION ALL SELECT ?)", (f, s, s))
            if twice == ("error", "gpu_var_merge: the merged counts exceed 2^62"):
                continue  # a state of over 2^61 values: twice is past the cap, an error
            if repr(twice) != repr(got[f]):
                self.fail("gpu_var_merge %s of a state twice is not the state's" % f, s, (got[f], twice))

    def go(self, seconds, cases):
        end = time.time() + seconds
        n = 0
        case_path = os.path.join(self.out, "case.bin")
        err_size = os.fstat(2).st_size  # main() sent fd 2 to OUT/stderr.log
        while time.time() < end and (not cases or n < cases):
            n += 1
            if self.rnd.randrange(4):
                ti, seeds, params, fin, fsql, fields = self.rnd.choice(self.texts)
                k = self.rnd.randrange(len(seeds))
                pool = seeds if self.rnd.randrange(3) else self.all_partials
                m = mutate(self.rnd, seeds[k], pool, fields[k])
                with open(case_path, "wb") as fh:
                    fh.write(m)
                self.partial_case(ti, m, seeds[k], params, fin, fsql)
            else:
                s = mutate(self.rnd, self.rnd.choice(self.states), self.states, [(8, 8), (16, 8), (24, 8)])
                with open(case_path, "wb") as fh:
                    fh.write(s)
                self.state_case(s)
            if os.fstat(2).st_size != err_size:  # a (recoverable) UBSan report
                err_size = os.fstat(2).st_size
                os.replace(case_path, os.path.join(self.out, "stderr-case-%d.bin" % n))
                print("fuzz-partials: stderr written at case %d (stderr-case-%d.bin)" % (n, n), flush=True)
        return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--cases", type=int, default=0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fuzz-partials"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    # the sanitizers' reports (a recoverable UBSan one goes on) into a file
    # that each case's growth check reads; this script prints on stdout
    log_path = os.path.join(a.out, "stderr.log")
    log = open(log_path, "wb")
    os.dup2(log.fileno(), 2)
    t0 = time.time()
    fz = Fuzz(a.out, a.seed)
    n = fz.go(a.seconds - (time.time() - t0), a.cases)
    with open(log_path, errors="replace") as fh:
        text = fh.read()
    reports = text.count("runtime error:") + text.count("ERROR: AddressSanitizer")
    if text:
        sys.stdout.write(text[:20000])
    print("fuzz-partials: seed %d, %d cases in %.0f s: %s; %d failed, %d sanitizer report(s), %d bytes "
          "on stderr" % (a.seed, n, time.time() - t0, json.dumps(fz.cases), fz.fails, reports, len(text)),
          flush=True)
    sys.exit(1 if fz.fails or text else 0)


if __name__ == "__main__":
    main()
