"""sqltest.py — runs tests/sql/*.sql through the sqlite3 CLI (sqlean style).

File format, one statement per line:
  * a CASE is a line `select '<name>', <condition>[, <diagnostics>...];`
    It passes when it prints exactly one row `<name>|1[|...]` and no error.
    Extra columns are shown on failure only.
  * a case line that ends with `-- error: <text>` passes when it prints no
    row and the CLI reports exactly `Runtime error near line N: <text>`;
    `-- error-prefix: <text>` accepts any message starting with <text>.
  * every other non-comment line is SETUP: it must print nothing and raise
    no error (a failing setup line counts as a failure).

Each file runs in every mode of gatest.MODES (default config, and forced onto
the GPU with cpu_max_rows=0 and chunk_bytes=65536); the answers must be the
same.  With GPUAGG_TEST_GPU=1 the forced run must really reach the GPU.

usage: sqltest.py FILE.sql...
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gatest  # noqa: E402

SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
CASE_RE = re.compile(r"^\s*select\s+'([A-Za-z0-9_]+)'\s*,", re.I)
ERR_RE = re.compile(r"--\s*error(-prefix)?:\s*(.*?)\s*$")
CLI_ERR_RE = re.compile(r"^(Runtime|Parse) error near line (\d+): (.*)$")


def preamble(config):
    lines = [".load %s" % gatest.LIB, ".mode list", ".separator |"]
    if config:
        sets = ", ".join("gpuagg_config('%s', '%s')" % kv for kv in config)
        conds = " and ".join("'' || gpuagg_config('%s') = '%s'" % kv for kv in config)
        lines.append("select '_config_set', (select count(*) from (select %s)) = 1 and %s;"
                     % (sets, conds))
    return lines


def gpu_probe():
    # Only with GPUAGG_TEST_GPU=1: the forced configuration must use the GPU.
    return ["create temp table _gpu_probe as select gpu_sum(value) s from generate_series(1, 200000);",
            "select '_forced_run_used_gpu', json_extract(gpuagg_info(), '$.last.path') in ('gpu', 'mixed'),"
            " json_extract(gpuagg_info(), '$.why');"]


def run_file(path, mode, config):
    suite = "sql/%s[%s]" % (os.path.basename(path), mode)
    rep = Rep(suite)
    with open(path) as f:
        body = f.read().split("\n")
    pre = preamble(config)
    post = gpu_probe() if (gatest.GPU and mode == "forced") else []
    lines = pre + body + post
    cases = {}  # name -> (lineno in script, expected error or None, prefix?)
    setup = {}  # lineno -> text
    for i, text in enumerate(lines, 1):
        s = text.strip()
        if not s or s.startswith("--") or s.startswith("."):
            continue
        m = CASE_RE.match(s)
        if m:
            name = m.group(1)
            e = ERR_RE.search(s)
            if name in cases:
                rep.fail(name, "duplicate case name (test bug)")
                continue
            cases[name] = (i, e.group(2) if e else None, bool(e and e.group(1)), text)
        else:
            setup[i] = text
    try:
        p = subprocess.run([SQLITE3, ":memory:"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        rep.fail("cli", "cannot run %s: %s" % (SQLITE3, e))
        return rep
    rows = {}
    for out in p.stdout.splitlines():
        name = out.split("|", 1)[0]
        rows.setdefault(name, []).append(out)
    errs = {}
    for err in p.stderr.splitlines():
        m = CLI_ERR_RE.match(err)
        if m:
            errs.setdefault(int(m.group(2)), []).append(m.group(3))
    for ln, text in setup.items():
        if ln in errs:
            rep.fail("setup_line_%d" % (ln - len(pre)), "%s -> error %s" % (text.strip(), errs[ln]))
    for name, (ln, experr, prefix, text) in cases.items():
        got = rows.pop(name, [])
        e = errs.get(ln, [])
        where = "line %d: %s" % (ln - len(pre), text.strip())
        if experr is not None:
            ok = not got and len(e) == 1 and (e[0].startswith(experr) if prefix else e[0] == experr)
            rep.result(name, ok, "expected error %r%s, got rows %s errors %s  [%s]"
                       % (experr, " (prefix)" if prefix else "", got, e, where))
        else:
            ok = not e and len(got) == 1 and got[0].split("|")[1:2] == ["1"]
            rep.result(name, ok, "got rows %s errors %s  [%s]" % (got, e, where))
    for name, outs in rows.items():
        rep.fail("unexpected_output", "%s" % outs)
    if p.returncode not in (0, 1):
        rep.fail("cli_exit", "sqlite3 exited %d: %s" % (p.returncode, p.stderr[-500:]))
    if not cases:
        rep.fail("no_cases", "no cases found in %s" % path)
    return rep


class Rep(gatest.Reporter):
    def result(self, name, ok, detail):
        self.check(name, ok, detail)

    def fail(self, name, detail):
        self.failed += 1
        print("FAIL [%s] %s: %s" % (self.suite, name, detail))


def main():
    failed = 0
    for path in sys.argv[1:]:
        for mode, config in gatest.mode_items():
            rep = run_file(path, mode, config)
            print("RESULT %s: %d passed, %d failed, %d skipped"
                  % (rep.suite, rep.passed, rep.failed, rep.skipped))
            sys.stdout.flush()
            failed += rep.failed
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
