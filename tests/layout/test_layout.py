"""test_layout.py — check_layout.py must catch what it is for (suite
`layout`): in a scratch tree of four folders, each planted defect (a cycle
of calls, a cycle of includes, an include and a call that point up the
layer order, a feature using a sibling's file, a file in no layer, a missing
object) makes it fail naming the defect, and the clean tree passes with its
layers printed.  The real tree is checked by `make check-layout`."""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gatest import Reporter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layout.py")
CC = os.environ.get("CC", "cc")
# the compiler and the checker load no extension: under make test-asan they
# must not inherit its preloaded ASan runtime (which reports their leaks)
ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

LAYERS = """# bottom first
low: low
mid: mid
siblings top: top/a top/b
"""

CLEAN = {
    "low/base.h": "#pragma once\nint low_base(int);\n",
    "low/base.c": '#include "base.h"\nint low_base(int x) { return x + 1; }\n',
    "mid/work.h": "#pragma once\nint mid_work(int);\n",
    "mid/work.c": '#include "base.h"\n#include "work.h"\nint mid_work(int x) { return low_base(x) * 2; }\n',
    "top/a/fa.c": '#include "work.h"\nint top_a(int x) { return mid_work(x); }\n',
    "top/b/fb.c": '#include "work.h"\nint top_b(int x) { return mid_work(x) + 1; }\n',
}


def build(tree, files):
    if os.path.exists(tree):
        shutil.rmtree(tree)
    for rel, text in files.items():
        p = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    with open(os.path.join(tree, "layers.txt"), "w") as f:
        f.write(LAYERS)
    inc = []
    for d in ("low", "mid", "top/a", "top/b"):
        inc += ["-I", os.path.join(tree, d)]
    for rel in files:
        if rel.endswith(".c"):
            obj = os.path.join(tree, "obj", rel[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run([CC, "-c", "-o", obj, os.path.join(tree, rel)] + inc, check=True,
                           env=ENV)


def check(tree, extra=()):
    p = subprocess.run([sys.executable, CHECK, "--layers", "layers.txt", "--objdir", "obj",
                        "--root", "."] + list(extra), cwd=tree, capture_output=True, text=True,
                       env=ENV)
    return p.returncode, p.stdout + p.stderr


def main():
    rep = Reporter("layout")
    tmp = tempfile.mkdtemp(prefix="gpuagg_layout_")
    tree = os.path.join(tmp, "t")
    try:
        build(tree, CLEAN)
        rc, out = check(tree)
        rep.check("clean_passes", rc == 0 and "no cycle" in out and "layer 2 top" in out, out)

        cases = {
            # low/base.c calls back into mid: a cycle of calls, and upward
            "call_cycle": (dict(CLEAN, **{
                "low/base.c": '#include "base.h"\nint mid_work(int);\n'
                              'int low_base(int x) { return x ? mid_work(x - 1) : 0; }\n'}),
                ["cycle between", "low/base.c", "mid/work.c", "uses mid_work"]),
            "include_cycle": (dict(CLEAN, **{
                "low/base.h": '#pragma once\n#include "work.h"\nint low_base(int);\n',
                "mid/work.h": '#pragma once\n#include "base.h"\nint mid_work(int);\n'}),
                ["cycle between", "low/base.h", "mid/work.h"]),
            "upward_include": (dict(CLEAN, **{
                "low/base.c": '#include "base.h"\n#include "work.h"\nint low_base(int x) { return x + 1; }\n'}),
                ["upward: low/base.c (low) -> mid/work.h (mid)"]),
            "sibling_call": (dict(CLEAN, **{
                "top/b/fb.c": '#include "work.h"\nint top_a(int);\nint top_b(int x) { return top_a(x); }\n'}),
                ["sibling: top/b/fb.c -> top/a/fa.c"]),
            # a new folder that the layer file does not name
            "no_layer": (dict(CLEAN, **{"top/c/fc.c": "int top_c(void) { return 3; }\n"}),
                         ["top/c/fc.c is in no layer"]),
        }
        for name, (files, want) in cases.items():
            build(tree, files)
            rc, out = check(tree)
            rep.check("planted_" + name, rc == 1 and all(w in out for w in want),
                      "rc %d, want %r in:\n%s" % (rc, want, out))
        # a source whose object is missing: build first, unless optional
        build(tree, CLEAN)
        os.remove(os.path.join(tree, "obj", "mid", "work.o"))
        rc, out = check(tree)
        rep.check("missing_object", rc == 1 and "no object file" in out, out)
        rc, out = check(tree, ["--optional", "mid/work.c"])
        rep.check("missing_object_optional", rc == 0, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.finish()


if __name__ == "__main__":
    main()
