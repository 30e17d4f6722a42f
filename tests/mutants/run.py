#!/usr/bin/env python3
"""tests/mutants/run.py — mutation testing: the suite must catch deliberate bugs.

Reads tests/mutants/mutants.txt (format in its header).  Copies the working
tree (tracked and untracked, not ignored files) into a scratch directory,
builds it there with CUDA=0 (and the fake-GPU build, so the suites that run
the GPU-path logic on the fake backend run too: mk/fakegpu.mk), checks that
the unmutated copy passes, then for
each mutant: replaces the snippet (which must occur exactly once), rebuilds,
and runs tests/run_all.sh with the fast suites first and STOP_ON_FAIL=1.  A
failing suite KILLS the mutant.  The real tree is never written.

Prints one line per mutant:
    KILLED    <name>  by <suite> (<seconds>s)
    SURVIVED  <name>  (<file>)
    SURVIVED  <name>  (needs the GPU seam: not counted)   [needs: gpu-seam]
    BROKEN    <name>  does not build                      [fix the mutant]
and fails (exit 1) when a snippet is stale, the baseline fails, a mutant is
BROKEN, or one SURVIVED that is not marked `needs: gpu-seam`.

    tests/mutants/run.py                 # every mutant (make test-mutants)
    tests/mutants/run.py --ci            # the `ci: yes` subset (make test-mutants-ci)
    tests/mutants/run.py NAME...         # only these
    tests/mutants/run.py --check         # only check that every snippet is found
    tests/mutants/run.py --gpu           # on a GPU machine: the device-code ones

Device code (`needs: gpu`, kernels/*.cu) is not built by CUDA=0, so the
runs above list those mutants as SKIPPED.  --gpu takes only them: it builds
the copy with CUDA (GENCODE from the environment: one architecture is
enough), runs the mutant's `first:` suites with GPUAGG_TEST_GPU=1 and its
`env:` (say CACHE_ONLY=window, so that a suite runs only the sections that
reach the code), and counts a survivor as a failure.  On the CPU a mutant
with both `first:` and `env:` runs its first: suites so narrowed first (a
kill in seconds), then, if it survives them, every suite in full.

Environment: PYTHON, SQLITE3 (passed to the suites), MUTANT_SUITES (the suite
order, default below), KEEP=1 (keep the scratch copy).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIST = os.path.join(HERE, "mutants.txt")
# Fast and sharp suites first: most mutants die in the first seconds (the
# differential `query`, about 100 s, last).  Every
# suite of tests/run_all.sh is in the list but `wheel` (packaging: it needs
# make wheel's output, SKIPs without it), so a survivor passed all of them.
SUITES = os.environ.get(
    "MUTANT_SUITES",
    "engine cpu_sum sql exact var var_kernel chunks harden config matadd fake:seam fake:gpu_faults fake:gpu fake:sql "
    "fake:exact fake:chunks fake:matadd state percentile state_engine state_worker scan_group query_errors query_json query_index query_join trust files trust_values first_hour "
    "aggregate "
    "aggregate_writer cache cache_file fake:cache fake:cache_file cache_share cache_keep cache_share_readers fake:cache_share fake:cache_keep cache_append fake:cache_append python analysts dask cli diff gpu gpu_faults docs install node query_partial "
    "query query_cache fake:query_cache fake:query_join")
FIELDS = ("name", "file", "find", "repl")


def env_of(m):
    """A mutant's `env:` line (KEY=VALUE ...) as a dict."""
    return dict(kv.split("=", 1) for kv in m.get("env", "").split() if "=" in kv)


def order_for(m):
    """The suites for mutant m: its `first:` suites (where it was killed
    before) ahead of the rest, so a kill costs one suite; a suite named there
    that is not in SUITES is not added."""
    first = [s for s in m.get("first", "").split() if s in SUITES.split()]
    return " ".join(first + [s for s in SUITES.split() if s not in first])


def unescape(s):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def parse(path):
    """The mutants, as dicts; raises ValueError on a malformed list."""
    muts, cur = [], None
    with open(path) as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines + [""], 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur is not None:
                missing = [k for k in FIELDS if k not in cur]
                if missing:
                    raise ValueError("%s:%d: mutant %r lacks %s" % (path, no, cur.get("name"), missing))
                muts.append(cur)
                cur = None
            continue
        m = re.match(r"^(\w+):(?: (.*))?$", line)
        if not m:
            raise ValueError("%s:%d: not 'key: value': %r" % (path, no, line))
        key, val = m.group(1), m.group(2) or ""
        if key not in FIELDS + ("ci", "needs", "first", "env"):
            raise ValueError("%s:%d: unknown key %r" % (path, no, key))
        if cur is None:
            if key != "name":
                raise ValueError("%s:%d: a mutant starts with 'name:'" % (path, no))
            cur = {}
        cur[key] = unescape(val) if key in ("find", "repl") else val.strip()
    names = [m["name"] for m in muts]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError("duplicate mutant names: %s" % sorted(dup))
    return muts


def tree_files():
    """Tracked and untracked (not ignored) files of the working tree; where
    there is no git checkout (the GPU machine's copy), every file but build
    outputs."""
    p = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], capture_output=True)
    if p.returncode == 0:
        return sorted(set(f for f in p.stdout.decode().split("\0") if f))
    skip = {".git", "build", ".device-kit", "dist", "node_modules", "__pycache__"}
    files = []
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in skip]
        files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names
                  if not n.endswith((".so", ".o", ".a", ".pyc"))]
    return sorted(files)


def copy_tree(dst):
    """The working tree's files (tree_files) into dst."""
    for rel in tree_files():
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue  # deleted in the working tree, or a link
        d = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(src, d)


def build(tree, gpu=False):
    """make the extension and its fake-GPU build (mk/fakegpu.mk) in tree,
    CUDA=0 and no LTO (fast); gpu: the extension with CUDA (no LTO); (ok, log)."""
    if gpu:
        cmd = ["make", "-s", "--no-print-directory", "-j%d" % (os.cpu_count() or 2), "CUDA=1",
               "LTO=", "libgpuagg.so"]
    else:
        cmd = ["make", "-s", "--no-print-directory", "-j2", "CUDA=0", "LTO=", "libgpuagg.so",
               "fake-lib"]
    p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    return p.returncode == 0, p.stdout + p.stderr


def run_suites(tree, suites, gpu=False, extra=None):
    """(passed?, killer suite or None, tail of the log); gpu: on the GPU
    (GPUAGG_TEST_GPU=1), with the mutant's env: pairs in extra."""
    env = dict(os.environ, GPUAGG_LIB=os.path.join(tree, "libgpuagg"), SUITES=suites,
               STOP_ON_FAIL="1", CUDA="0", LTO="", MAKEFLAGS="",
               GPUAGG_FAKE_LIB=os.path.join(tree, "build", "fake", "libgpuagg"),
               GPUAGG_FAKE_RESTORE=os.path.join(tree, "build", "fake", "test_restore"))
    if gpu:
        env.update(CUDA="1", GPUAGG_TEST_GPU="1")
        env.pop("GPUAGG_FAKE_LIB")
    else:
        env.pop("GPUAGG_TEST_GPU", None)  # CPU machine semantics, as in CI
    env.update(extra or {})
    p = subprocess.run(["tests/run_all.sh"], cwd=tree, env=env, capture_output=True, text=True)
    killer = None
    for line in p.stdout.split("\n"):
        m = re.match(r"^-- (\S+): \d+ passed, (\d+) failed", line)
        if m and int(m.group(2)) > 0:
            killer = m.group(1)
            break
    if p.returncode != 0 and killer is None:
        killer = "run_all"
    fails = [l for l in p.stdout.split("\n") if l.startswith("FAIL")]
    return p.returncode == 0, killer, "\n".join(fails[:3]) or p.stdout[-600:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--ci", action="store_true", help="only mutants marked 'ci: yes'")
    ap.add_argument("--check", action="store_true", help="only check the snippets")
    ap.add_argument("--list", default=LIST)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--gpu", action="store_true",
                    help="only the device-code mutants (needs: gpu), on this machine's GPU")
    a = ap.parse_args()
    try:
        muts = parse(a.list)
    except ValueError as e:
        print("FAIL: %s" % e)
        return 1
    if a.names:
        unknown = set(a.names) - {m["name"] for m in muts}
        if unknown:
            print("FAIL: no mutant named %s" % sorted(unknown))
            return 1
        muts = [m for m in muts if m["name"] in a.names]
    elif a.ci:
        muts = [m for m in muts if m.get("ci") == "yes"]

    # every snippet exactly once, before anything is built
    stale = 0
    for m in muts:
        path = os.path.join(ROOT, m["file"])
        try:
            n = open(path).read().count(m["find"]) if m["find"] else -1
        except OSError as e:
            n, m["why"] = -1, str(e)
        if n != 1:
            stale += 1
            print("STALE     %-34s snippet found %s times in %s (update the mutant)"
                  % (m["name"], n if n >= 0 else "no file or empty find:", m["file"]))
    if stale:
        print("mutants: %d stale snippet(s): FAIL" % stale)
        return 1
    if a.check:
        print("mutants: all %d snippets found exactly once" % len(muts))
        return 0
    skipped = [m for m in muts if (m.get("needs") == "gpu") != a.gpu]
    muts = [m for m in muts if (m.get("needs") == "gpu") == a.gpu]
    for m in skipped if not a.gpu else []:
        print("SKIPPED   %-34s device code: tests/mutants/run.py --gpu on a GPU machine"
              % m["name"])
    if a.gpu:
        for m in muts:
            if not m.get("first"):
                print("FAIL: device-code mutant %s names no first: suites" % m["name"])
                return 1
    if not muts:
        print("mutants: none to run")
        return 0

    t_all = time.time()
    tmp = tempfile.mkdtemp(prefix="gpuagg_mutants_")
    tree = os.path.join(tmp, "tree")
    try:
        copy_tree(tree)
        ok, log = build(tree, a.gpu)
        if not ok:
            print("FAIL: the unmutated copy does not build:\n" + log[-2000:])
            return 1
        if not a.no_baseline:
            t0 = time.time()
            if a.gpu:  # each mutant's own suites and env, unmutated
                ok, killer, log, seen = True, None, "", set()
                for m in muts:
                    if ok and (m["first"], m.get("env", "")) not in seen:
                        seen.add((m["first"], m.get("env", "")))
                        ok, killer, log = run_suites(tree, m["first"], True, env_of(m))
            else:
                ok, killer, log = run_suites(tree, SUITES)
            if not ok:
                print("FAIL: the unmutated copy fails suite %s:\n%s" % (killer, log))
                return 1
            print("baseline  unmutated copy passes every suite (%.0fs)" % (time.time() - t0))
        killed = survived = seam = broken = 0
        for m in muts:
            path = os.path.join(tree, m["file"])
            with open(path) as f:
                orig = f.read()
            with open(path, "w") as f:
                f.write(orig.replace(m["find"], m["repl"], 1))
            t0 = time.time()
            try:
                ok, log = build(tree, a.gpu)
                if not ok:
                    broken += 1
                    print("BROKEN    %-34s does not build: %s" % (m["name"], log.strip()[-300:]))
                    continue
                if a.gpu:
                    passed, killer, log = run_suites(tree, m["first"], True, env_of(m))
                else:
                    passed = True
                    first = [s for s in m.get("first", "").split() if s in SUITES.split()]
                    if first and env_of(m):
                        # its first: suites narrowed by its env: (say
                        # CACHE_ONLY=...) kill it in seconds; a survivor
                        # still has to pass every suite in full below
                        passed, killer, log = run_suites(tree, " ".join(first), False, env_of(m))
                    if passed:
                        passed, killer, log = run_suites(tree, order_for(m))
                dt = time.time() - t0
                if not passed:
                    killed += 1
                    print("KILLED    %-34s by %s (%.0fs)" % (m["name"], killer, dt))
                    if m.get("needs") == "gpu-seam":
                        print("          (marked 'needs: gpu-seam' but killed: drop that line)")
                elif m.get("needs") == "gpu-seam":
                    seam += 1
                    print("SURVIVED  %-34s (%s) NEEDS THE GPU SEAM: only GPU partials reach "
                          "this code; not counted until the fake GPU backend runs in CI (%.0fs)"
                          % (m["name"], m["file"], dt))
                else:
                    survived += 1
                    print("SURVIVED  %-34s (%s) (%.0fs)" % (m["name"], m["file"], dt))
            finally:
                with open(path, "w") as f:
                    f.write(orig)
            sys.stdout.flush()
        bad = survived + broken
        print("mutants: %d killed, %d survived, %d broken, %d survived needing the GPU seam "
              "(not counted), %d in all, %.0fs: %s"
              % (killed, survived, broken, seam, len(muts), time.time() - t_all,
                 "FAIL" if bad else "OK"))
        return 1 if bad else 0
    finally:
        if os.environ.get("KEEP") == "1":
            print("scratch copy kept in %s" % tree)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
