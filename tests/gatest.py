"""gatest.py — shared helpers of the Python test suites of gpuagg.

Each suite builds a Reporter, records checks with rep.check(name, ok, detail),
and ends with rep.finish(), which prints the suite's summary line in the form
tests/run_all.sh sums up:

    RESULT <suite>: <passed> passed, <failed> failed, <skipped> skipped

Environment:
  GPUAGG_LIB       the extension without suffix (default: <repo>/libgpuagg)
  GPUAGG_TEST_GPU  1: suites also run forced onto a GPU that must be usable,
                   and GPU-only checks run instead of printing SKIP
  VERBOSE          1: print a PASS line for every check
"""

import math
import os
import sqlite3
import struct
import sys
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(ROOT, "libgpuagg")
GPU = os.environ.get("GPUAGG_TEST_GPU") == "1"
VERBOSE = os.environ.get("VERBOSE") == "1"

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
DBL_MAX = float.fromhex("0x1.fffffffffffffp+1023")
DBL_TRUE_MIN = float.fromhex("0x1p-1074")
INF = float("inf")

# Configurations every SQL-level suite runs under.  "forced" is the GPU path
# with small chunks; on a machine without a GPU it must fall back to the CPU
# and give identical answers.
MODES = {
    "default": [],
    "forced": [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")],
}


class Reporter:
    def __init__(self, suite):
        self.suite = suite
        self.passed = self.failed = self.skipped = 0
        self.names = set()

    def check(self, name, ok, detail=""):
        if name in self.names:  # a duplicate name is a test bug
            print("FAIL [%s] %s: duplicate check name" % (self.suite, name))
            self.failed += 1
            return False
        self.names.add(name)
        if ok:
            self.passed += 1
            if VERBOSE:
                print("PASS [%s] %s" % (self.suite, name))
        else:
            self.failed += 1
            print("FAIL [%s] %s: %s" % (self.suite, name, detail))
        sys.stdout.flush()
        return bool(ok)

    def skip(self, name, why):
        self.skipped += 1
        print("SKIP: [%s] %s (%s)" % (self.suite, name, why))

    def finish(self):
        print("RESULT %s: %d passed, %d failed, %d skipped"
              % (self.suite, self.passed, self.failed, self.skipped))
        sys.exit(1 if self.failed else 0)


def connect(path=":memory:", config=()):
    """A connection with the extension loaded and `config` applied."""
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    configure(con, config)
    return con


def configure(con, config):
    for name, value in config:
        got = con.execute("select gpuagg_config(?, ?)", (name, value)).fetchone()[0]
        if str(got) != str(value):
            raise RuntimeError("gpuagg_config(%r, %r) returned %r" % (name, value, got))


def mode_items():
    """(mode name, config) pairs of this run."""
    return list(MODES.items())


def q1(con, sql, params=()):
    """The first column of the first row, or ('error', message)."""
    try:
        row = con.execute(sql, params).fetchone()
    except sqlite3.Error as e:
        return ("error", str(e))
    return row[0] if row else None


# ---------------------------------------------------------------- values

def bits(x):
    return struct.unpack("<q", struct.pack("<d", x))[0]


def same(a, b):
    """Same SQL value: same storage class and, for reals, the same bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bits(a) == bits(b)
    return a == b


def sql_type(v):
    """typeof() of a Python value read back from SQLite."""
    if v is None:
        return "null"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "real"
    return "text" if isinstance(v, str) else "blob"


def typed_key(v):
    """A value with its storage class, reals by their bits (1 != 1.0, 0.0 !=
    -0.0): rows compared as SQLite returned them, value and typeof."""
    if v is None:
        return ("null",)
    if isinstance(v, float):
        return ("real", struct.pack("<d", v))
    if isinstance(v, int):
        return ("integer", v)
    if isinstance(v, str):
        return ("text", v)
    return ("blob", bytes(v))


def sort_key(v):
    """SQLite's order of values under BINARY in a UTF-8 database: numbers <
    TEXT (memcmp of UTF-8) < BLOB (memcmp).  Python compares int with float
    exactly, as SQLite does."""
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, str):
        return (2, v.encode())
    return (3, bytes(v))


def first_extreme(vals, sign):
    """What max() (sign > 0) or min() (sign < 0) gives on a scan of vals, value
    AND type: the first value that no later value beats, NULLs skipped (so of
    5 and 5.0 the first seen wins); None when there is no value."""
    best = bk = None
    for v in vals:
        if v is None:
            continue
        k = sort_key(v)
        if best is None or (k > bk if sign > 0 else k < bk):
            best, bk = v, k
    return best


def show(v):
    if isinstance(v, float):
        return "%s(real %r)" % (v.hex(), v)
    if isinstance(v, int) and not isinstance(v, bool):
        return "%d(integer)" % v
    return repr(v)


def exact(values):
    """The exact sum of finite doubles and ints as a Fraction (fast: every
    double is an integer multiple of 2^-1074)."""
    acc = 0
    for v in values:
        if isinstance(v, int):
            acc += v << 1074
        else:
            m, e = math.frexp(v)  # v = m * 2^e, 0.5 <= |m| < 1
            mi = int(m * (1 << 53))
            sh = e - 53 + 1074
            acc += mi << sh if sh >= 0 else mi >> -sh  # sh < 0 only drops zero bits
    return Fraction(acc, 1 << 1074)


def round_fraction(f):
    """Fraction -> nearest double, ties to even; overflow gives +-Inf."""
    try:
        return float(f)  # int/int true division: correctly rounded
    except OverflowError:
        return INF if f > 0 else -INF


def ref_sum(values):
    """What gpu_sum must return for these values (None = NULL), or
    ('error', 'integer overflow')."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if all(isinstance(v, int) for v in vals):
        s = sum(vals)
        if s > INT64_MAX or s < INT64_MIN:
            return ("error", "integer overflow")
        return s
    return ref_real_sum(vals)


def ref_real_sum(vals):
    pinf = any(isinstance(v, float) and v == INF for v in vals)
    ninf = any(isinstance(v, float) and v == -INF for v in vals)
    if pinf and ninf:
        return None
    if pinf:
        return INF
    if ninf:
        return -INF
    return round_fraction(exact(vals))


def ref_total(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return 0.0
    return ref_real_sum(vals)


def ref_avg(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if any(isinstance(v, float) and math.isinf(v) for v in vals):
        return ref_real_sum(vals)  # +Inf, -Inf, or NULL for both
    return round_fraction(exact(vals) / len(vals))


def fsum_ref(values):
    """math.fsum as a second, independent reference (finite floats only)."""
    return math.fsum(values)
