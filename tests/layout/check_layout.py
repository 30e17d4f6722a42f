#!/usr/bin/env python3
"""check_layout.py — the file dependency graph of gpuagg, from the code itself.

    check_layout.py --layers mk/layers.txt --objdir build/layout [--root DIR]

Reads the declared layer order (mk/layers.txt: one line a layer, bottom
first, `name: folder folder ...`), then builds the graph of the library's
sources:

  * a node is a source file (.c, .cu, .h, .cuh) of the declared folders;
  * an edge A -> B when A has `#include "B"`, or when A's object file
    (OBJDIR/<source>.o) has an undefined symbol that B's object defines
    (`nm -P`): two sources that call each other form a cycle, and so do
    headers that include each other.

It fails (exit 1) on:
  1. a cycle between files (each strongly connected component is listed,
     with the edges inside it and why each exists);
  2. an edge that points up the declared order (a lower layer using a
     higher one, e.g. kernels -> engine), or one between two folders of a
     `siblings` layer (one feature using another's internals);
  3. a source of the library folders in no declared layer, an object file
     missing (build first), an #include that names no file or several.

When it passes it prints the graph's layers: each file at its depth (the
longest path below it), grouped by layer.  Standard library only.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys

SRC_EXT = (".c", ".cu")
SIBLINGS = set()  # layers whose folders may not use each other
ALL_EXT = (".c", ".cu", ".h", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(path):
    """[(name, [folders])], bottom first; a line `siblings NAME: ...` makes
    a layer whose folders may not use each other (SIBLINGS)."""
    layers = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise SystemExit("%s:%d: expected 'name: folder ...'" % (path, no))
            name, folders = line.split(":", 1)
            if name.startswith("siblings "):
                name = name[len("siblings "):]
                SIBLINGS.add(name.strip())
            folders = [d.strip().rstrip("/") for d in folders.split() if d.strip()]
            if not folders:
                raise SystemExit("%s:%d: layer %s names no folder" % (path, no, name))
            layers.append((name.strip(), folders))
    return layers


def layer_of(rel, layers):
    """(index, name) of the layer whose folder is the longest prefix of rel."""
    best = None
    for i, (name, folders) in enumerate(layers):
        for d in folders:
            if rel == d or rel.startswith(d + "/"):
                if best is None or len(d) > best[2]:
                    best = (i, name, len(d))
    return (best[0], best[1]) if best else None


def module_of(rel):
    return rel  # a node is a file


def sources(root, layers):
    """Every source under the top folders of the declared ones (ext/ for
    ext/cache): a new folder that the layer file does not name is found,
    and fails as being in no layer."""
    out = []
    tops = sorted(set(d.split("/")[0] for _, folders in layers for d in folders))
    for d in tops:
        if os.path.isfile(os.path.join(root, d)):
            out.append(d)
            continue
        if True:
            top = os.path.join(root, d)
            for dirpath, _, files in os.walk(top):
                for f in files:
                    if f.endswith(ALL_EXT):
                        out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(set(out))


def nm_symbols(nm, obj):
    """(defined, undefined) global symbol names of obj."""
    p = subprocess.run([nm, "-P", obj], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("check-layout: %s %s failed: %s" % (nm, obj, p.stderr.strip()))
    defined, undefined = set(), set()
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif (kind.isupper() and kind != "U") or kind in ("u", "i"):
            defined.add(name)  # global: text, data, bss, read-only, weak
    return defined, undefined


def build_graph(root, layers, objdir, nm, optional=()):
    errors = []
    files = sources(root, layers)
    by_path = set(files)
    # includes
    edges = {}  # (A, B) -> reason

    def add(a, b, why):
        if a != b:
            edges.setdefault((a, b), why)

    for rel in files:
        if layer_of(rel, layers) is None:
            errors.append("%s is in no layer of the layer file" % rel)
        with open(os.path.join(root, rel), errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            here = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            if here in by_path:
                target = here
            else:
                hits = [p for p in files if p == inc or p.endswith("/" + inc)]
                if len(hits) != 1:
                    if not hits and not os.path.exists(os.path.join(root, inc)):
                        continue  # a system or generated header (sqlite3ext.h)
                    if len(hits) > 1:
                        errors.append("%s: #include \"%s\" names %s" % (rel, inc, hits))
                    continue
                target = hits[0]
            add(module_of(rel), module_of(target), "#include \"%s\" in %s" % (inc, rel))
    # symbols
    defs, uses = {}, {}
    for rel in files:
        if not rel.endswith(SRC_EXT):
            continue
        obj = os.path.join(objdir, os.path.splitext(rel)[0] + ".o")
        if not os.path.exists(obj):
            if not any(fnmatch.fnmatch(rel, pat) for pat in optional):
                errors.append("%s: no object file %s (build it first)" % (rel, obj))
            continue
        d, u = nm_symbols(nm, obj)
        uses[rel] = u
        for s in d:
            defs.setdefault(s, rel)
    for rel, u in uses.items():
        for s in sorted(u):
            if s in defs:
                add(module_of(rel), module_of(defs[s]), "%s uses %s of %s" % (rel, s, defs[s]))
    modules = sorted(set(module_of(f) for f in files))
    return modules, edges, errors


def sccs(nodes, succ):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in nodes:
        if v0 in index:
            continue
        work = [(v0, iter(succ.get(v0, ())))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", required=True)
    ap.add_argument("--objdir", required=True)
    ap.add_argument("--root", default=".")
    ap.add_argument("--nm", default=os.environ.get("NM", "nm"))
    ap.add_argument("--optional", nargs="*", default=[],
                    help="sources whose object may be missing (another backend's)")
    args = ap.parse_args()
    layers = read_layers(os.path.join(args.root, args.layers)
                         if not os.path.isabs(args.layers) else args.layers)
    modules, edges, errors = build_graph(args.root, layers, args.objdir, args.nm,
                                         args.optional)
    succ = {}
    for (a, b) in edges:
        succ.setdefault(a, set()).add(b)
    for comp in sccs(modules, succ):
        if len(comp) > 1:
            inside = ["    %s -> %s: %s" % (a, b, why) for (a, b), why in sorted(edges.items())
                      if a in comp and b in comp]
            errors.append("cycle between %s:\n%s" % (", ".join(comp), "\n".join(inside)))
    for (a, b), why in sorted(edges.items()):
        la, lb = layer_of(a, layers), layer_of(b, layers)
        if la and lb and la[0] < lb[0]:
            errors.append("upward: %s (%s) -> %s (%s): %s" % (a, la[1], b, lb[1], why))
        elif la and lb and la[0] == lb[0] and la[1] in SIBLINGS and \
                os.path.dirname(a) != os.path.dirname(b):
            errors.append("sibling: %s -> %s (layer %s): %s" % (a, b, la[1], why))
    if errors:
        for e in errors:
            print("check-layout: FAIL: %s" % e)
        print("check-layout: %d problem(s) in %d files, %d edges"
              % (len(errors), len(modules), len(edges)))
        return 1
    # depth: the longest path below each module (the graph is acyclic now)
    depth = {}

    def d(m):
        if m not in depth:
            depth[m] = 0
            depth[m] = 1 + max((d(n) for n in succ.get(m, ())), default=-1)
        return depth[m]

    for m in modules:
        d(m)
    print("check-layout: %d files, %d edges, no cycle, nothing points up" % (len(modules), len(edges)))
    for i, (name, folders) in enumerate(layers):
        mine = [m for m in modules if layer_of(m, layers)[0] == i]
        print("layer %d %s (%s):" % (i, name, " ".join(folders)))
        for lvl in sorted(set(depth[m] for m in mine)):
            print("  depth %2d: %s" % (lvl, " ".join(sorted(m for m in mine if depth[m] == lvl))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
