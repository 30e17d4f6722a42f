#!/usr/bin/python3
"""Plots of gpuagg's benchmark CSVs, as PNGs.

  bench/plot.py [--in bench/out] [--out bench/plots]

Reads whichever of these exist in --in and writes one PNG for each:

  sql.csv       bench/sql_bench.py --csv     -> sql_time_vs_rows.png
                (rows, kind, query, median_s): wall time against rows,
                log-log, one line per query, one panel per kind of data
  kernels.csv   build/bench/kernels --csv    -> kernels_gbps.png
                (kernel, size, median_ms, gbps, ...): GB/s per kernel,
                one panel per size, CUB and the device copy marked
  matadd.csv    build/bench/matadd --csv     -> matadd.png
                (mode, memory, streams, median_ms, pct_of_limit): time per
                mode, pinned and pageable, with the copy-engine limit
  accuracy.csv  bench/accuracy.py            -> accuracy_ulps.png
                error in ulps of sum(), total(), gpu_sum() per data set

Column names are read from each header; a missing optional column is left
out of the plot, a file missing a needed one is reported and skipped.  Needs
matplotlib (Debian: apt-get install python3-matplotlib); without it prints
SKIP and exits 0.
"""
import argparse
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [{(k or "").strip().lower(): (v or "").strip() for k, v in r.items()} for r in rows]


def col(rows, *names):
    """The first of names that is a column of rows, or None."""
    if not rows:
        return None
    for n in names:
        if n in rows[0]:
            return n
    return None


def num(s):
    try:
        x = float(s)
    except (TypeError, ValueError):
        return math.nan
    return x


def save(fig, out, name, layout=True):
    path = os.path.join(out, name)
    if layout:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")
    return path


# ---- sql.csv: time vs rows ----

def plot_sql(plt, rows, out):
    from matplotlib.ticker import FuncFormatter
    c_rows, c_q = col(rows, "rows", "n"), col(rows, "query", "func", "function")
    c_t = col(rows, "median_s", "median_ms", "seconds", "time_s")
    if not (c_rows and c_q and c_t):
        print(f"sql.csv: needs rows, query and median_s columns; has {list(rows[0])}")
        return None
    scale = 1e3 if c_t.endswith("_s") or c_t == "seconds" else 1.0  # to ms
    c_kind = col(rows, "kind", "data")
    kinds = sorted({r[c_kind] for r in rows}) if c_kind else [""]
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4.4), squeeze=False,
                             sharey=True)
    style = {"count": ("0.6", ":"), "sum": ("tab:red", "-"), "total": ("tab:orange", "-"),
             "gpu_sum": ("tab:blue", "-"), "gpu_sum@cpu": ("tab:cyan", "--"),
             "gpu_sum@gpu": ("tab:green", "--")}
    for ax, kind in zip(axes[0], kinds):
        sub = [r for r in rows if not c_kind or r[c_kind] == kind]
        queries = list(dict.fromkeys(r[c_q] for r in sub))
        for q in queries:
            pts = sorted((num(r[c_rows]), num(r[c_t]) * scale) for r in sub if r[c_q] == q)
            pts = [p for p in pts if p[0] > 0 and p[1] > 0]
            if not pts:
                continue
            color, ls = style.get(q, (None, "-"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, ls=ls,
                    color=color, label=f"{q}(x)" if "@" not in q else q)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("rows")
        ax.set_title(f"{kind} values" if kind else "")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    # plain numbers on the time axis; minor ticks labelled too when it spans
    # less than two decades (else 2 and 5 only)
    lo, hi = axes[0][0].get_ylim()
    every = hi / lo < 100
    axes[0][0].yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if every or f"{v:.1e}"[0] in "25" else ""))
    for ax in axes[0]:
        ax.tick_params(axis="y", which="minor", labelsize=7)
    axes[0][0].set_ylabel("wall time per query, ms (median; sqlite3 process)")
    fig.suptitle("SELECT f(x) FROM t: built-in aggregates vs gpuagg", fontsize=11)
    return save(fig, out, "sql_time_vs_rows.png")


# ---- kernels.csv: GB/s per kernel ----

def kernel_color(name):
    n = name.lower()
    if "copy" in n:
        return "0.25"
    if n.startswith("cub"):
        return "tab:gray"
    if n.startswith("seed") or n.startswith("v1") or n.startswith("v2") or n.startswith("v3"):
        return "tab:orange"
    if "matadd" in n:
        return "tab:purple"
    if n.startswith("tune"):
        return "lightsteelblue"
    return "tab:blue"


def plot_kernels(plt, rows, out):
    c_k = col(rows, "kernel", "name", "variant")
    c_g = col(rows, "gbps", "gb_per_s", "gb/s", "bandwidth_gbps")
    c_size = col(rows, "size", "size_bytes", "bytes", "n")
    c_ms = col(rows, "median_ms", "ms")
    c_ref = col(rows, "pct_of_ref", "pct_of_cub", "pct")
    if not (c_k and (c_g or c_ms)):
        print(f"kernels.csv: needs kernel and gbps columns; has {list(rows[0])}")
        return None
    sizes = list(dict.fromkeys(r[c_size] for r in rows)) if c_size else [""]
    height = max(3.0, 0.32 * max(sum(1 for r in rows if not c_size or r[c_size] == s)
                                 for s in sizes) + 1.2)
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.4 * len(sizes), height), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        sub = [r for r in rows if not c_size or r[c_size] == size]
        names = [r[c_k] for r in sub]
        vals = [num(r[c_g]) if c_g else math.nan for r in sub]
        y = list(range(len(sub)))[::-1]
        ax.barh(y, [0 if math.isnan(v) else v for v in vals],
                color=[kernel_color(n) for n in names])
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        vmax = max([v for v in vals if not math.isnan(v)] or [1])
        for yi, r, v in zip(y, sub, vals):
            lab = f"{v:.0f}" if not math.isnan(v) else "n/a"
            if c_ref and not math.isnan(num(r[c_ref])) and "copy" not in r[c_k].lower():
                lab += f"  ({num(r[c_ref]):.0f}% of ref)"
            ax.text((0 if math.isnan(v) else v) + vmax * 0.01, yi, lab, va="center", fontsize=7)
        copy = [num(r[c_g]) for r in sub if "copy" in r[c_k].lower()]
        if copy and not math.isnan(copy[0]):
            ax.axvline(copy[0], color="0.25", ls="--", lw=1)
            ax.text(copy[0], y[0] + 0.6, " copy ceiling", fontsize=7, color="0.25", va="bottom")
        ax.set_xlim(0, vmax * 1.35)
        ax.set_xlabel("GB/s (bytes read; matadd/copy: read + written)")
        ax.set_title(f"size {size}" if size else "")
        ax.grid(True, axis="x", alpha=0.3)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color="tab:blue", label="gpuagg (gak_*)"),
                        Patch(color="lightsteelblue", label="gpuagg tuning variants"),
                        Patch(color="tab:gray", label="CUB"),
                        Patch(color="tab:orange", label="seed V1-V3"),
                        Patch(color="tab:purple", label="matadd"),
                        Patch(color="0.25", label="device copy")],
               fontsize=8, loc="lower center", ncol=6, frameon=False)
    fig.suptitle("Reduction kernels: throughput vs CUB and the copy ceiling", fontsize=11)
    fig.tight_layout(rect=(0, 0.045, 1, 1))
    return save(fig, out, "kernels_gbps.png", layout=False)


# ---- matadd.csv ----

def plot_matadd(plt, rows, out):
    c_mode, c_ms = col(rows, "mode"), col(rows, "median_ms", "ms")
    c_mem, c_pct = col(rows, "memory", "mem"), col(rows, "pct_of_limit", "pct")
    if not (c_mode and c_ms):
        print(f"matadd.csv: needs mode and median_ms columns; has {list(rows[0])}")
        return None
    modes = list(dict.fromkeys(r[c_mode] for r in rows))
    mems = list(dict.fromkeys(r[c_mem] for r in rows)) if c_mem else [""]
    fig, ax = plt.subplots(figsize=(1.3 * len(modes) + 3, 4.4))
    width = 0.8 / len(mems)
    colors = {"pinned": "tab:blue", "pageable": "tab:orange"}
    limits = []
    for j, mem in enumerate(mems):
        xs, hs, labs = [], [], []
        for i, m in enumerate(modes):
            r = next((r for r in rows if r[c_mode] == m and (not c_mem or r[c_mem] == mem)), None)
            if not r:
                continue
            ms = num(r[c_ms])
            xs.append(i - 0.4 + width * (j + 0.5))
            hs.append(ms)
            pct = num(r[c_pct]) if c_pct else math.nan
            labs.append(f"{ms:.0f}" + (f"\n{pct:.0f}%" if not math.isnan(pct) else ""))
            if not math.isnan(pct) and pct > 0 and mem in ("pinned", ""):
                limits.append(ms * pct / 100)
        bars = ax.bar(xs, hs, width, label=mem or None, color=colors.get(mem))
        for b, lab in zip(bars, labs):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), lab, ha="center",
                    va="bottom", fontsize=7)
    if limits:
        lim = sorted(limits)[len(limits) // 2]
        ax.axhline(lim, color="0.25", ls="--", lw=1, label=f"copy-engine limit ({lim:.0f} ms)")
    ax.set_xticks(range(len(modes)))
    ax.set_xticklabels(modes, fontsize=8)
    ax.set_ylabel("ms (median), lower is better")
    ax.set_ylim(0, max(num(r[c_ms]) for r in rows) * 1.2)
    ax.set_title("Matrix addition: whole / queue / N streams (labels: ms, % of limit)",
                 fontsize=10)
    if c_mem or limits:
        ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return save(fig, out, "matadd.png")


# ---- accuracy.csv ----

def plot_accuracy(plt, rows, out):
    c_ds = col(rows, "dataset")
    funcs = [(c, lab, colr) for c, lab, colr in (("sum_ulps", "sum()", "tab:red"),
                                                 ("total_ulps", "total()", "tab:orange"),
                                                 ("gpu_sum_ulps", "gpu_sum()", "tab:blue"))
             if col(rows, c)]
    if not (c_ds and funcs):
        print(f"accuracy.csv: needs dataset and *_ulps columns; has {list(rows[0])}")
        return None
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(rows) + 2), 4.4))
    width = 0.8 / len(funcs)
    for j, (c, lab, colr) in enumerate(funcs):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(rows))]
        vals = [num(r[c]) for r in rows]
        # an infinite error (the result overflowed) is drawn above the rest
        top = max([v for v in (num(r[cc]) for r in rows for cc, _, _ in funcs)
                   if math.isfinite(v)] + [1]) * 30
        ax.bar(xs, [top if math.isinf(v) else v if v > 0 else 0 for v in vals], width,
               label=lab, color=colr)
        for x, v in zip(xs, vals):
            if v == 0 or math.isinf(v):
                ax.text(x, top if v else 0, "inf" if v else "0", ha="center", va="bottom",
                        fontsize=7, color=colr)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r[c_ds] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("error, ulps of the correctly rounded sum")
    ver = rows[0].get("sqlite", "")
    ax.set_title(f"Error of sum(), total() and gpu_sum() (SQLite {ver})".replace(" ()", ""),
                 fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return save(fig, out, "accuracy_ulps.png")


PLOTS = [("sql.csv", plot_sql), ("kernels.csv", plot_kernels), ("matadd.csv", plot_matadd),
         ("accuracy.csv", plot_accuracy)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in", dest="inp", default=os.path.join(HERE, "out"))
    ap.add_argument("--out", default=os.path.join(HERE, "plots"))
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: plots need matplotlib (Debian: apt-get install python3-matplotlib)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    made = failed = 0
    for name, fn in PLOTS:
        path = os.path.join(a.inp, name)
        if not os.path.exists(path):
            print(f"skip {name}: not in {a.inp}")
            continue
        rows = read_csv(path)
        if not rows:
            print(f"skip {name}: no rows")
            continue
        try:
            if fn(plt, rows, a.out):
                made += 1
        except Exception as e:  # noqa: BLE001 - one bad CSV must not stop the others
            failed += 1
            print(f"FAIL: plotting {name}: {type(e).__name__}: {e}")
        plt.close("all")
    print(f"{made} plot(s) in {a.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
