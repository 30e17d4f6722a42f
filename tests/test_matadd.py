#!/usr/bin/python3
"""test_matadd.py — gpu_matadd tests: tests/sql_matadd/*.sql through the CLI.

File format (one statement per line, as tests/sqltest.py):
  * a CASE is a line `select '<name>', <condition>;` and passes when it prints
    exactly `<name>|1` and raises no error;
  * a line (case or any other statement) ending in `-- error: <text>` passes
    when it prints nothing and the CLI reports exactly that error on that
    line (`-- error-prefix:` accepts any message starting with <text>);
  * every other statement is SETUP and must print nothing and raise no error;
  * `--plan <name> | <query> | <text> | <text>` runs EXPLAIN QUERY PLAN on
    <query> and passes when the plan contains the first text and does not
    contain the second (either may be empty).

Every file runs in two modes: "default" (the connection's defaults) and
"forced" (device gpu, cpu_max_rows 0, chunk_bytes 65536: the GPU path with
many bands; on a machine without a GPU that is the CPU fallback, which must
give the same answers).  With GPUAGG_TEST_GPU=1 the forced mode must really
reach the GPU (a probe checks gpu_matadd_info()), and fault.sql also runs
under injected CUDA faults (GPUAGG_FAULT) at every pipeline stage.

Prints FAIL and SKIP lines (a PASS line per case with VERBOSE=1), like every
suite, and ends with `RESULT matadd: N passed, N failed, N skipped`; exits 1
on any failure.  Environment: SQLITE3 (CLI, default sqlite3), GPUAGG_LIB (the
extension without suffix, default <repo>/libgpuagg), GPUAGG_TEST_GPU,
VERBOSE.
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(ROOT, "libgpuagg")
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
GPU = os.environ.get("GPUAGG_TEST_GPU") == "1"
VERBOSE = os.environ.get("VERBOSE") == "1"
SQLDIR = os.path.join(ROOT, "tests", "sql_matadd")

CASE_RE = re.compile(r"^\s*select\s+'([A-Za-z0-9_]+)'\s*,", re.I)
ERR_RE = re.compile(r"--\s*error(-prefix)?:\s*(.*?)\s*$")
CLI_ERR_RE = re.compile(r"^(?:(?:Runtime|Parse) error|Error:) near line (\d+): (.*)$")

FORCED = [("device", "gpu"), ("cpu_max_rows", "0"), ("chunk_bytes", "65536")]
FAULTS = ["pinned:1", "dalloc:1", "h2d:3", "launch:2", "d2h:2", "sync:1", "kernel:1"]

passed = failed = 0


def report(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        if VERBOSE:
            print("PASS [matadd] %s" % name)
    else:
        failed += 1
        print("FAIL [matadd] %s: %s" % (name, detail))
    sys.stdout.flush()


def preamble(config):
    lines = [".load %s" % LIB, ".mode list", ".separator |"]
    if config:
        sets = ", ".join("gpuagg_config('%s', '%s')" % kv for kv in config)
        lines.append("select '_config', (select count(*) from (select %s)) = 1;" % sets)
    return lines


def gpu_probe():
    return ["create temp table _probe(i, j, v);",
            "insert into _probe select value / 100, value % 100, value + 0.5 from generate_series(0, 9999);",
            "select '_forced_used_gpu', (select count(*) from gpu_matadd('temp._probe', 'temp._probe')) = 10000"
            " and json_extract(gpu_matadd_info(), '$.path') = 'dense-gpu';"]


def run_file(path, label, config, post=(), env_extra=None):
    pre = preamble(config)
    with open(path) as f:
        raw = f.read().split("\n")
    body, plans = [], {}
    for text in raw:
        if text.startswith("--plan "):
            parts = [x.strip() for x in text[7:].split("|")] + ["", ""]
            name, query, has, lacks = parts[0], parts[1].rstrip(";"), parts[2], parts[3]
            plans[name] = (has, lacks, query)
            body += [".print @@plan %s" % name, "explain query plan %s;" % query, ".print @@end"]
        else:
            body.append(text)
    lines = pre + body + list(post)
    cases, setup = {}, {}
    for n, text in enumerate(lines, 1):
        s = text.strip()
        if not s or s.startswith("--") or s.startswith("."):
            continue
        m = CASE_RE.match(s)
        e = ERR_RE.search(s)
        if m or e:
            name = m.group(1) if m else "stmt_line%d" % (n - len(pre))
            if name in cases:
                report("%s:%s" % (label, name), False, "duplicate case name")
                continue
            cases[name] = (n, e.group(2) if e else None, bool(e and e.group(1)), s)
        else:
            setup[n] = s
    env = dict(os.environ)
    env.update(env_extra or {})
    try:
        p = subprocess.run([SQLITE3, ":memory:"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True, timeout=600, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        report(label, False, "cannot run %s: %s" % (SQLITE3, e))
        return
    rows, plan_out, inplan = {}, {}, None
    for out in p.stdout.splitlines():
        if out.startswith("@@plan "):
            inplan = out[7:]
            plan_out[inplan] = []
        elif out == "@@end":
            inplan = None
        elif inplan is not None:
            plan_out[inplan].append(out)
        else:
            rows.setdefault(out.split("|", 1)[0], []).append(out)
    for name, (has, lacks, query) in plans.items():
        text = "\n".join(plan_out.get(name, []))
        ok = bool(text) and (not has or has in text) and (not lacks or lacks not in text)
        report("%s:%s" % (label, name), ok, "plan of %s: %r (want %r, not %r)" % (query, text, has, lacks))
    errs = {}
    for err in p.stderr.splitlines():
        m = CLI_ERR_RE.match(err)
        if m:
            errs.setdefault(int(m.group(1)), []).append(m.group(2))
    bad_setup = ["line %d: %s -> %s" % (n - len(pre), t, errs[n]) for n, t in setup.items() if n in errs]
    if bad_setup:
        report("%s:setup" % label, False, "; ".join(bad_setup))
    for name, (n, experr, prefix, text) in cases.items():
        got = rows.pop(name, [])
        e = errs.get(n, [])
        where = "line %d: %s" % (n - len(pre), text[:160])
        if experr is not None:
            ok = not got and len(e) == 1 and (e[0].startswith(experr) if prefix else e[0] == experr)
            report("%s:%s" % (label, name), ok, "expected error %r, got rows %s errors %s [%s]"
                   % (experr, got, e, where))
        else:
            ok = not e and got == ["%s|1" % name]
            report("%s:%s" % (label, name), ok, "got rows %s errors %s [%s]" % (got, e, where))
    for name, outs in rows.items():
        report("%s:unexpected_output" % label, False, str(outs[:5]))
    if p.returncode not in (0, 1) or not cases:
        report("%s:cli" % label, False, "exit %d, %d cases: %s" % (p.returncode, len(cases), p.stderr[-400:]))


def main():
    if not os.path.exists(LIB + ".so"):
        report("build", False, "%s.so not found (run make)" % LIB)
    files = sorted(glob.glob(os.path.join(SQLDIR, "*.sql")))
    for path in files:
        base = os.path.basename(path)[:-4]
        if base == "fault":
            continue
        run_file(path, "%s[default]" % base, [])
        run_file(path, "%s[forced]" % base, FORCED, gpu_probe() if GPU else ())
    fault = os.path.join(SQLDIR, "fault.sql")
    skipped = 0
    if os.path.exists(fault):
        if GPU:
            for spec in FAULTS:
                run_file(fault, "fault[%s]" % spec, FORCED, (), {"GPUAGG_FAULT": spec})
        else:
            skipped = len(FAULTS)
            print("SKIP: [matadd] fault injection x%d (needs GPUAGG_TEST_GPU=1 and a GPU)" % skipped)
    print("RESULT matadd: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
