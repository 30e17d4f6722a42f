#!/usr/bin/python3
"""The Star Schema Benchmark's five tables and 13 queries (O'Neil, O'Neil,
Chen, Revilak: "The Star Schema Benchmark and Augmented Fact Table Indexing",
TPCTC 2009), for bench/ssb_bench.py (issue 38), in a SQLite file or as
DuckDB SQL.

  bench/ssb.py --sf 1 --db FILE         make FILE (kept and reused when it
                                        holds the same scale factor)
  bench/ssb.py --sf 0.01 --db FILE --selectivity
                                        each query's share of lineorder rows,
                                        against the paper's
  bench/ssb.py --selftest 0.002         every table at a small scale made by
                                        SQLite and by DuckDB (node and
                                        @duckdb/node-api) must be equal

The tables have SSB's columns; `dwdate` stands for SSB's `date` (a name that
SQL dialects reserve).  Every value is an integer hash of the row number, as
bench/lineitem.py makes its rows (no random(): the same rows every time, in
SQLite and in DuckDB):
  h_c(i)     = u * u % P with u = (i * A_c + B_c) % P, P = 2^31 - 1, one
               multiplier A_c a column
  lineorder  6,000,000 * SF rows in blocks of 28 = 7 orders of 1..7 lines
             (lo_orderkey, lo_linenumber: 4 lines an order on average, as in
             SSB); per order (a hash of lo_orderkey): lo_custkey,
             lo_orderdate (1992-01-01 .. 1998-08-02: SSB's order dates, as a
             yyyymmdd INTEGER, the key of dwdate), lo_orderpriority (5),
             lo_shippriority '0'; per line: lo_partkey, lo_suppkey,
             lo_quantity 1..50, lo_extendedprice = quantity * the part's
             retail price in cents (TPC-H's formula), lo_discount 0..10,
             lo_revenue = extendedprice * (100 - discount) / 100 (integer
             division), lo_supplycost = 6 * retail price / 10, lo_tax 0..8,
             lo_commitdate = order date + 30..90 days, lo_shipmode (7),
             lo_ordtotalprice (a hash: no query reads it)
  customer   30,000 * SF; c_nation one of TPC-H's 25 nations (5 a region),
             c_city the nation's name padded to 9 characters and a digit
             (SSB's 'UNITED KI1'), c_mktsegment (5)
  supplier   2,000 * SF; s_nation, s_region, s_city as the customer's
  part       200,000 * (1 + floor(log2 SF)) for SF >= 1 (SSB's rule), else
             200,000 * SF (at least 1,000); p_mfgr 'MFGR#m' (m 1..5),
             p_category 'MFGR#mc' (c 1..5), p_brand1 'MFGR#mcb' (b 1..40,
             unpadded, as SSB's, so that Q2.2's BETWEEN takes 8 brands)
  dwdate     every day of 1992 .. 1998 (2,556 rows); d_weeknuminyear =
             (d_daynuminyear - 1) / 7 + 1; d_daynuminweek 1 = Sunday
The dimension keys are INTEGER PRIMARY KEYs (SQLite looks a row up by its
rowid), and the file is ANALYZEd: SQLite's Bloom filters need sqlite_stat1.
The file gets a table ssb_meta(sf, version); a file with another scale
factor or version is made anew (through FILE.tmp, then renamed).
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import lineitem

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = 1
P = 2147483647
HASH = {
    "ocust": (1103515245, 12345), "odate": (1229782941, 19), "oprio": (69069, 5),
    "part": (1664525, 1013904223), "supp": (22695477, 1), "qty": (134775813, 7),
    "disc": (214013, 2531011), "tax": (1140671485, 12820163), "commit": (65793, 4282663),
    "mode": (843314861, 453816693), "total": (1566083941, 3),
    "cnat": (1812433253, 11), "ccity": (1597334677, 13), "cseg": (741103597, 17),
    "caddr": (2654435761 % P, 29), "snat": (3266489917 % P, 31), "scity": (668265263, 37),
    "saddr": (374761393, 41), "mfgr": (2246822519 % P, 43), "cat": (3266489917 % P + 2, 47),
    "brand": (2166136261 % P, 53), "color": (16777619, 59), "ptype": (1099511628 % P, 61),
    "size": (48271, 67), "cont": (16807, 71),
}
JD0 = 2448622.5          # julianday('1992-01-01')
DAY0 = "1992-01-01"
DAYS = 2557              # 1992-01-01 .. 1998-12-31
ORDER_DAYS = 2406        # 1992-01-01 .. 1998-08-02
NATIONS = [  # TPC-H's nations, with their region
    ("ALGERIA", "AFRICA"), ("ARGENTINA", "AMERICA"), ("BRAZIL", "AMERICA"),
    ("CANADA", "AMERICA"), ("EGYPT", "MIDDLE EAST"), ("ETHIOPIA", "AFRICA"),
    ("FRANCE", "EUROPE"), ("GERMANY", "EUROPE"), ("INDIA", "ASIA"), ("INDONESIA", "ASIA"),
    ("IRAN", "MIDDLE EAST"), ("IRAQ", "MIDDLE EAST"), ("JAPAN", "ASIA"),
    ("JORDAN", "MIDDLE EAST"), ("KENYA", "AFRICA"), ("MOROCCO", "AFRICA"),
    ("MOZAMBIQUE", "AFRICA"), ("PERU", "AMERICA"), ("CHINA", "ASIA"), ("ROMANIA", "EUROPE"),
    ("SAUDI ARABIA", "MIDDLE EAST"), ("VIETNAM", "ASIA"), ("RUSSIA", "EUROPE"),
    ("UNITED KINGDOM", "EUROPE"), ("UNITED STATES", "AMERICA")]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
COLORS = ["almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
          "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
          "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep",
          "dim", "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro",
          "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki"]
TYPES = ["STANDARD ANODIZED TIN", "SMALL PLATED COPPER", "MEDIUM BURNISHED STEEL",
         "LARGE BRUSHED BRASS", "ECONOMY POLISHED NICKEL", "PROMO ANODIZED STEEL"]
CONTAINERS = ["SM CASE", "SM BOX", "MED BAG", "MED PACK", "LG CASE", "LG BOX", "JUMBO PKG",
              "WRAP DRUM"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
SEASONS = ["Winter", "Winter", "Spring", "Spring", "Spring", "Summer", "Summer", "Summer",
           "Fall", "Fall", "Fall", "Christmas"]

TABLES = {
    "lineorder": [
        ("lo_orderkey", "INTEGER"), ("lo_linenumber", "INTEGER"), ("lo_custkey", "INTEGER"),
        ("lo_partkey", "INTEGER"), ("lo_suppkey", "INTEGER"), ("lo_orderdate", "INTEGER"),
        ("lo_orderpriority", "TEXT"), ("lo_shippriority", "TEXT"), ("lo_quantity", "INTEGER"),
        ("lo_extendedprice", "INTEGER"), ("lo_ordtotalprice", "INTEGER"),
        ("lo_discount", "INTEGER"), ("lo_revenue", "INTEGER"), ("lo_supplycost", "INTEGER"),
        ("lo_tax", "INTEGER"), ("lo_commitdate", "INTEGER"), ("lo_shipmode", "TEXT")],
    "customer": [
        ("c_custkey", "INTEGER PRIMARY KEY"), ("c_name", "TEXT"), ("c_address", "TEXT"),
        ("c_city", "TEXT"), ("c_nation", "TEXT"), ("c_region", "TEXT"), ("c_phone", "TEXT"),
        ("c_mktsegment", "TEXT")],
    "supplier": [
        ("s_suppkey", "INTEGER PRIMARY KEY"), ("s_name", "TEXT"), ("s_address", "TEXT"),
        ("s_city", "TEXT"), ("s_nation", "TEXT"), ("s_region", "TEXT"), ("s_phone", "TEXT")],
    "part": [
        ("p_partkey", "INTEGER PRIMARY KEY"), ("p_name", "TEXT"), ("p_mfgr", "TEXT"),
        ("p_category", "TEXT"), ("p_brand1", "TEXT"), ("p_color", "TEXT"), ("p_type", "TEXT"),
        ("p_size", "INTEGER"), ("p_container", "TEXT")],
    "dwdate": [
        ("d_datekey", "INTEGER PRIMARY KEY"), ("d_date", "TEXT"), ("d_dayofweek", "TEXT"),
        ("d_month", "TEXT"), ("d_year", "INTEGER"), ("d_yearmonthnum", "INTEGER"),
        ("d_yearmonth", "TEXT"), ("d_daynuminweek", "INTEGER"), ("d_daynuminmonth", "INTEGER"),
        ("d_daynuminyear", "INTEGER"), ("d_monthnuminyear", "INTEGER"),
        ("d_weeknuminyear", "INTEGER"), ("d_sellingseason", "TEXT"),
        ("d_lastdayinweekfl", "INTEGER"), ("d_lastdayinmonthfl", "INTEGER"),
        ("d_holidayfl", "INTEGER"), ("d_weekdayfl", "INTEGER")],
}
DUCK_TYPE = {"INTEGER": "BIGINT", "INTEGER PRIMARY KEY": "BIGINT", "TEXT": "VARCHAR"}

# The 13 queries as the paper gives them (`date` -> dwdate), in SQL both
# SQLite and DuckDB run as written.
QUERIES = {
    "q1.1": "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, dwdate "
            "WHERE lo_orderdate = d_datekey AND d_year = 1993 AND lo_discount BETWEEN 1 AND 3 "
            "AND lo_quantity < 25",
    "q1.2": "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, dwdate "
            "WHERE lo_orderdate = d_datekey AND d_yearmonthnum = 199401 "
            "AND lo_discount BETWEEN 4 AND 6 AND lo_quantity BETWEEN 26 AND 35",
    "q1.3": "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, dwdate "
            "WHERE lo_orderdate = d_datekey AND d_weeknuminyear = 6 AND d_year = 1994 "
            "AND lo_discount BETWEEN 5 AND 7 AND lo_quantity BETWEEN 26 AND 35",
    "q2.1": "SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, dwdate, part, supplier "
            "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey "
            "AND lo_suppkey = s_suppkey AND p_category = 'MFGR#12' AND s_region = 'AMERICA' "
            "GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1",
    "q2.2": "SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, dwdate, part, supplier "
            "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey "
            "AND lo_suppkey = s_suppkey AND p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' "
            "AND s_region = 'ASIA' GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1",
    "q2.3": "SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, dwdate, part, supplier "
            "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey "
            "AND lo_suppkey = s_suppkey AND p_brand1 = 'MFGR#2239' AND s_region = 'EUROPE' "
            "GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1",
    "q3.1": "SELECT c_nation, s_nation, d_year, sum(lo_revenue) AS revenue "
            "FROM customer, lineorder, supplier, dwdate WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey AND c_region = 'ASIA' "
            "AND s_region = 'ASIA' AND d_year >= 1992 AND d_year <= 1997 "
            "GROUP BY c_nation, s_nation, d_year ORDER BY d_year ASC, revenue DESC",
    "q3.2": "SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue "
            "FROM customer, lineorder, supplier, dwdate WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey "
            "AND c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES' "
            "AND d_year >= 1992 AND d_year <= 1997 GROUP BY c_city, s_city, d_year "
            "ORDER BY d_year ASC, revenue DESC",
    "q3.3": "SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue "
            "FROM customer, lineorder, supplier, dwdate WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey "
            "AND (c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') "
            "AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5') "
            "AND d_year >= 1992 AND d_year <= 1997 GROUP BY c_city, s_city, d_year "
            "ORDER BY d_year ASC, revenue DESC",
    "q3.4": "SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue "
            "FROM customer, lineorder, supplier, dwdate WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey "
            "AND (c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') "
            "AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5') AND d_yearmonth = 'Dec1997' "
            "GROUP BY c_city, s_city, d_year ORDER BY d_year ASC, revenue DESC",
    "q4.1": "SELECT d_year, c_nation, sum(lo_revenue - lo_supplycost) AS profit "
            "FROM dwdate, customer, supplier, part, lineorder WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey "
            "AND lo_orderdate = d_datekey AND c_region = 'AMERICA' AND s_region = 'AMERICA' "
            "AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2') GROUP BY d_year, c_nation "
            "ORDER BY d_year, c_nation",
    "q4.2": "SELECT d_year, s_nation, p_category, sum(lo_revenue - lo_supplycost) AS profit "
            "FROM dwdate, customer, supplier, part, lineorder WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey "
            "AND lo_orderdate = d_datekey AND c_region = 'AMERICA' AND s_region = 'AMERICA' "
            "AND (d_year = 1997 OR d_year = 1998) AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2') "
            "GROUP BY d_year, s_nation, p_category ORDER BY d_year, s_nation, p_category",
    "q4.3": "SELECT d_year, s_city, p_brand1, sum(lo_revenue - lo_supplycost) AS profit "
            "FROM dwdate, customer, supplier, part, lineorder WHERE lo_custkey = c_custkey "
            "AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey "
            "AND lo_orderdate = d_datekey AND c_region = 'AMERICA' "
            "AND s_nation = 'UNITED STATES' AND (d_year = 1997 OR d_year = 1998) "
            "AND p_category = 'MFGR#14' GROUP BY d_year, s_city, p_brand1 "
            "ORDER BY d_year, s_city, p_brand1",
}
# the columns the 13 queries read, a table's gpu_cache list (issue 38 §3.2:
# with each table's entry, gpu_query answers the queries from the host cache)
CACHE_COLUMNS = {
    "lineorder": "lo_orderdate, lo_partkey, lo_suppkey, lo_custkey, lo_revenue, lo_supplycost, "
                 "lo_extendedprice, lo_discount, lo_quantity",
    "dwdate": "d_datekey, d_year, d_yearmonthnum, d_weeknuminyear, d_yearmonth",
    "part": "p_partkey, p_brand1, p_category, p_mfgr",
    "supplier": "s_suppkey, s_region, s_nation, s_city",
    "customer": "c_custkey, c_region, c_nation, c_city",
}
# the paper's selectivity of each query: the share of lineorder rows that
# pass every filter (its table 3.1)
PAPER_SELECTIVITY = {
    "q1.1": 1.9e-2, "q1.2": 6.5e-4, "q1.3": 7.5e-5, "q2.1": 8.0e-3, "q2.2": 1.6e-3,
    "q2.3": 2.0e-4, "q3.1": 3.4e-2, "q3.2": 1.4e-3, "q3.3": 5.5e-5, "q3.4": 7.6e-7,
    "q4.1": 1.6e-2, "q4.2": 4.5e-3, "q4.3": 9.1e-5,
}


def sizes(sf):
    """(lineorder, customer, supplier, part) rows at scale factor sf."""
    parts = 200000 * (1 + int(math.floor(math.log2(sf)))) if sf >= 1 else \
        max(1000, int(200000 * sf))
    return (max(28, int(round(6000000 * sf))), max(25, int(round(30000 * sf))),
            max(25, int(round(2000 * sf))), parts)


def _h(name, x):
    a, b = HASH[name]
    u = "((%s * %d + %d) %% %d)" % (x, a, b, P)
    return "(%s * %s %% %d)" % (u, u, P)


def _pick(expr, values):
    return "CASE %s %s END" % (expr, " ".join("WHEN %d THEN '%s'" % (k, v.replace("'", "''"))
                                              for k, v in enumerate(values)))


class _Dialect:
    """What SQLite and DuckDB spell differently: integer division, a day
    number's parts, zero-padded numbers."""

    def __init__(self, name):
        self.name = name
        self.div = "/" if name == "sqlite" else "//"

    def datekey(self, d):
        if self.name == "sqlite":
            return "CAST(strftime('%%Y%%m%%d', %.1f + %s) AS INTEGER)" % (JD0, d)
        return "CAST(strftime(DATE '%s' + CAST(%s AS INTEGER), '%%Y%%m%%d') AS BIGINT)" % (
            DAY0, d)

    def part(self, d, what):
        """year, month, day, dayofyear, weekday (0 = Sunday) of day number d"""
        if self.name == "sqlite":
            fmt = {"year": "%Y", "month": "%m", "day": "%d", "doy": "%j", "dow": "%w"}[what]
            return "CAST(strftime('%s', %.1f + %s) AS INTEGER)" % (fmt, JD0, d)
        fn = {"year": "year", "month": "month", "day": "day", "doy": "dayofyear",
              "dow": "dayofweek"}[what]
        return "%s(DATE '%s' + CAST(%s AS INTEGER))" % (fn, DAY0, d)

    def pad(self, e, width):
        if self.name == "sqlite":
            return "printf('%%0%dd', %s)" % (width, e)
        return "lpad(CAST(%s AS VARCHAR), %d, '0')" % (e, width)

    def text(self, e):
        return "CAST(%s AS TEXT)" % e if self.name == "sqlite" else "CAST(%s AS VARCHAR)" % e


def _nation_cols(dl, nat, city):
    names = [n for n, _ in NATIONS]
    regions = [r for _, r in NATIONS]
    return [_pick(nat, [(n + " " * 9)[:9] for n in names]) + " || " + dl.text(city),
            _pick(nat, names), _pick(nat, regions)]


def select_sql(table, sf, dialect, source):
    """SELECT of table's columns for i in `source` (a FROM item with a
    column i), in dialect 'sqlite' or 'duckdb'."""
    dl = _Dialect(dialect)
    n_lo, n_c, n_s, n_p = sizes(sf)
    d = dl.div
    if table == "lineorder":
        k = " + ".join("CAST(p >= %d AS INTEGER)" % s for s in (1, 3, 6, 10, 15, 21))
        l1 = ("SELECT i, (i - 1) {d} 28 * 7 + ({k}) + 1 AS okey, ({k}) AS kk, p "
              "FROM (SELECT i, (i - 1) % 28 AS p FROM {src}) s0").format(d=d, k=k, src=source)
        l2 = ("SELECT i, okey, p - kk * (kk + 1) {d} 2 + 1 AS lnum, 1 + {ocust} % {nc} AS ck, "
              "{odate} % {od} AS od, {oprio} % 5 AS pr, 1 + {part} % {np} AS pk, "
              "1 + {supp} % {ns} AS sk, 1 + {qty} % 50 AS q, {disc} % 11 AS dc, "
              "{tax} % 9 AS tx, {commit} % 61 AS cm, {mode} % 7 AS sm, "
              "{total} % 50000000 AS tot FROM ({l1}) s1").format(
                  d=d, nc=n_c, od=ORDER_DAYS, np=n_p, ns=n_s, l1=l1,
                  ocust=_h("ocust", "okey"), odate=_h("odate", "okey"),
                  oprio=_h("oprio", "okey"), part=_h("part", "i"), supp=_h("supp", "i"),
                  qty=_h("qty", "i"), disc=_h("disc", "i"), tax=_h("tax", "i"),
                  commit=_h("commit", "i"), mode=_h("mode", "i"), total=_h("total", "okey"))
        l3 = ("SELECT *, 90000 + (pk {d} 10) % 20001 + 100 * (pk % 1000) AS retail "
              "FROM ({l2}) s2").format(d=d, l2=l2)
        cols = ["okey", "lnum", "ck", "pk", "sk", dl.datekey("od"), _pick("pr", PRIORITIES),
                "'0'", "q", "q * retail", "tot", "dc",
                "q * retail * (100 - dc) {d} 100".format(d=d), "6 * retail {d} 10".format(d=d),
                "tx", dl.datekey("od + 30 + cm"), _pick("sm", MODES)]
        frm = "(%s) s3" % l3
    elif table in ("customer", "supplier"):
        c = table[0]
        nat = "%s %% 25" % _h(c + "nat", "i")
        city = "%s %% 10" % _h(c + "city", "i")
        cols = ["i", "'%s#' || %s" % ("Customer" if c == "c" else "Supplier", dl.pad("i", 9)),
                "substr('%s', 1 + %s %% 60, 10 + i %% 15)" % (
                    lineitem.POOL.replace("'", "''"), _h(c + "addr", "i"))]
        cols += _nation_cols(dl, nat, city)
        cols.append(dl.text("10 + " + nat) + " || '-' || " +
                    dl.pad("%s %% 1000" % _h(c + "addr", "i"), 3) + " || '-' || " +
                    dl.pad("i % 10000", 4))
        if c == "c":
            cols.append(_pick("%s %% 5" % _h("cseg", "i"), SEGMENTS))
        frm = source
    elif table == "part":
        m = "(1 + %s %% 5)" % _h("mfgr", "i")
        c = "(1 + %s %% 5)" % _h("cat", "i")
        b = "(1 + %s %% 40)" % _h("brand", "i")
        cols = ["i", _pick("%s %% 40" % _h("color", "i"), COLORS) + " || ' ' || " +
                _pick("%s %% 40" % _h("color", "i + 7"), COLORS),
                "'MFGR#' || " + dl.text(m), "'MFGR#' || " + dl.text(m) + " || " + dl.text(c),
                "'MFGR#' || " + dl.text(m) + " || " + dl.text(c) + " || " + dl.text(b),
                _pick("%s %% 40" % _h("color", "i"), COLORS),
                _pick("%s %% 6" % _h("ptype", "i"), TYPES), "1 + %s %% 50" % _h("size", "i"),
                _pick("%s %% 8" % _h("cont", "i"), CONTAINERS)]
        frm = source
    else:  # dwdate: i = 1 .. DAYS, day number i - 1
        x = "(i - 1)"
        y, mo, dy = dl.part(x, "year"), dl.part(x, "month"), dl.part(x, "day")
        doy, dow = dl.part(x, "doy"), dl.part(x, "dow")
        nxt = "(i)"
        mon = "(%s - 1)" % mo
        cols = [dl.datekey(x),
                _pick(mon, MONTHS) + " || ' ' || " + dl.text(dy) + " || ', ' || " + dl.text(y),
                _pick(dow, WEEKDAYS), _pick(mon, MONTHS), y, "%s * 100 + %s" % (y, mo),
                _pick(mon, [m[:3] for m in MONTHS]) + " || " + dl.text(y), "%s + 1" % dow, dy,
                doy, mo, "(%s - 1) %s 7 + 1" % (doy, d), _pick(mon, SEASONS),
                "CAST(%s = 6 AS INTEGER)" % dow,
                "CAST(%s = 1 AS INTEGER)" % dl.part(nxt, "day"),
                "CAST((%s = 1 AND %s = 1) OR (%s = 12 AND %s = 25) OR (%s = 7 AND %s = 4) "
                "AS INTEGER)" % (mo, dy, mo, dy, mo, dy),
                "CAST(%s BETWEEN 1 AND 5 AS INTEGER)" % dow]
        frm = source
    names = [c for c, _ in TABLES[table]]
    return "SELECT %s FROM %s" % (", ".join("%s AS %s" % (e, c) for e, c in zip(cols, names)),
                                  frm)


def table_rows(table, sf):
    n_lo, n_c, n_s, n_p = sizes(sf)
    return {"lineorder": n_lo, "customer": n_c, "supplier": n_s, "part": n_p,
            "dwdate": DAYS}[table]


def create_sql(table):
    return "CREATE TABLE %s(%s)" % (table, ", ".join("%s %s" % c for c in TABLES[table]))


def duckdb_sql(sf):
    """DuckDB's CREATE TABLEs of the same rows (native types)."""
    out = []
    for t, cols in TABLES.items():
        types = ", ".join("CAST(%s AS %s) AS %s" % (c, DUCK_TYPE[ty], c) for c, ty in cols)
        out.append("CREATE TABLE %s AS SELECT %s FROM (%s) g" % (
            t, types, select_sql(t, sf, "duckdb", "range(1, %d + 1) t(i)" % table_rows(t, sf))))
    return out


def _gen(n):
    return "(WITH RECURSIVE gen(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM gen WHERE i < %d) " \
           "SELECT i FROM gen) g" % n


def fill(con, sf):
    """Every table of scale factor sf into connection con, and ANALYZE."""
    con.execute("BEGIN")
    for t in TABLES:
        con.execute(create_sql(t))
        con.execute("INSERT INTO %s %s" % (t, select_sql(t, sf, "sqlite", _gen(table_rows(t, sf)))))
    con.execute("CREATE TABLE ssb_meta(sf REAL, version INTEGER)")
    con.execute("INSERT INTO ssb_meta VALUES (?, ?)", (sf, VERSION))
    con.execute("COMMIT")
    con.execute("ANALYZE")


def meta(path):
    if not os.path.exists(path):
        return None
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return con.execute("SELECT sf, version FROM ssb_meta").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None


def make(path, sf, quiet=False):
    """FILE with SSB at scale factor sf, made unless it is already there."""
    if meta(path) == (sf, VERSION):
        if not quiet:
            print("# reusing %s (SF %g)" % (path, sf), flush=True)
        return False
    t0 = time.time()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    for f in (tmp, tmp + "-journal"):
        if os.path.exists(f):
            os.remove(f)
    con = sqlite3.connect(tmp, isolation_level=None)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    fill(con, sf)
    con.close()
    os.replace(tmp, path)
    if not quiet:
        print("# made %s: SF %g (%d lineorder rows) in %.1f s, %.0f MB" % (
            path, sf, sizes(sf)[0], time.time() - t0, os.path.getsize(path) / 1e6), flush=True)
    return True


def filter_count_sql(q):
    """count(*) of the rows of query q's FROM and WHERE (its selectivity's
    numerator)."""
    sql = QUERIES[q]
    frm = sql.index(" FROM ")
    end = sql.find(" GROUP BY ")
    return "SELECT count(*)" + (sql[frm:end] if end > 0 else sql[frm:])


def selectivity(path):
    con = sqlite3.connect(path)
    n = con.execute("SELECT count(*) FROM lineorder").fetchone()[0]
    worst = 1.0
    for q in QUERIES:
        k = con.execute(filter_count_sql(q)).fetchone()[0]
        s = k / n
        r = s / PAPER_SELECTIVITY[q]
        worst = max(worst, r, 1 / r if r else float("inf"))
        print("%-5s %9d rows  %.2e  paper %.1e  (x%.2f)" % (q, k, s, PAPER_SELECTIVITY[q], r))
    print("# the furthest from the paper: x%.2f" % worst)
    con.close()


def selftest(sf):
    """Every table at scale factor sf by SQLite and by DuckDB: equal."""
    con = sqlite3.connect(":memory:", isolation_level=None)
    fill(con, sf)
    node = shutil.which("node")
    ddir = os.path.join(HERE, "duckdb")
    if not node or not os.path.isdir(os.path.join(ddir, "node_modules", "@duckdb", "node-api")):
        print("# SKIP selftest: no node or no @duckdb/node-api (make bench-duckdb-setup)")
        return 0
    reqs = [{"op": "build", "sql": s} for s in duckdb_sql(sf)]
    order = {t: ", ".join(str(k + 1) for k in range(len(c))) for t, c in TABLES.items()}
    reqs += [{"op": "query", "sql": "SELECT * FROM %s ORDER BY %s" % (t, order[t])}
             for t in TABLES]
    proc = subprocess.run([node, os.path.join(HERE, "duckdb_query.mjs"), "1"],
                          input="\n".join(json.dumps(x) for x in reqs) + "\n",
                          capture_output=True, text=True, cwd=ddir)
    if proc.returncode != 0:
        print("# FAIL: duckdb: %s" % proc.stderr[-800:])
        return 1
    answers = [json.loads(x) for x in proc.stdout.splitlines()][len(TABLES):]
    bad = 0
    for t, ans in zip(TABLES, answers):
        if "error" in ans:
            print("# FAIL: duckdb %s: %s" % (t, ans["error"]))
            bad += 1
            continue
        mine = con.execute("SELECT * FROM %s ORDER BY %s" % (t, order[t])).fetchall()
        theirs = lineitem.duck_rows(ans)
        diff = [(a, b) for a, b in zip(mine, theirs)
                if any(type(x) is not type(y) or x != y for x, y in zip(a, b))]
        if len(mine) != len(theirs) or diff:
            print("# FAIL: %s: %d and %d rows, %d differ; first: %r" % (
                t, len(mine), len(theirs), len(diff), diff[:1]))
            bad += 1
        else:
            print("# selftest: %s: %d rows identical in SQLite and DuckDB" % (t, len(mine)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--db", help="the SQLite file to make (or reuse)")
    ap.add_argument("--selectivity", action="store_true",
                    help="each query's share of lineorder rows, against the paper's")
    ap.add_argument("--selftest", type=float, metavar="SF")
    args = ap.parse_args()
    if args.selftest:
        return selftest(args.selftest)
    if not args.db:
        ap.error("give --db FILE or --selftest SF")
    make(args.db, args.sf)
    if args.selectivity:
        selectivity(args.db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
