"""test_docs.py — every example of README.md and docs/*.md runs as written.

Blocks checked, in every README.md and docs/*.md:

```sqlite    a sqlite3 shell session.  Lines starting `sqlite> ` are input,
            lines starting `   ...> ` continue the input above, every other
            line is output shown for the input above it.  The whole block
            runs as one script through the sqlite3 CLI (env SQLITE3, default
            sqlite3), from a fresh in-memory database unless the block opens
            a file, in an empty temporary directory; `.load ./libgpuagg` is
            replaced by `.load $GPUAGG_LIB` (default <repo>/libgpuagg).  The
            output must equal the shown output line by line.  Errors are
            shown as the interactive shell prints them (`Runtime error: ...`,
            `Parse error: ...`; the batch form's `near line N` is removed).
```sql       SQL without shown output: it must run without error (with the
            extension loaded, from a fresh in-memory database, `-bail`).
```sql-fragment
            not run: syntax outlines, or SQL that needs a file or a table
            from elsewhere (say which in the text around it).

The masking rule for machine-dependent output: in a shown output line, the
token `…` (or `...`) matches any text, possibly empty, so
`{"load_ms":…,"how":"parallel, …"}` matches every load time and thread count.
Everything else in the line must match exactly, but for trailing blanks
(`.mode column` pads its last column).

Relative links of these files (and #anchors into Markdown files) are also
checked: one check per file.

One check per block (`<file>:<line>`), then the RESULT line.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, ROOT, LIB  # noqa: E402

SQLITE3 = os.environ.get("SQLITE3") or "sqlite3"
FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
CONT = re.compile(r"^\s*\.\.\.> ?")
WILD = re.compile(r"…|\.\.\.")


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def blocks(path):
    """(kind, first line number, lines) of every fenced block."""
    out, kind, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = FENCE.match(line)
            if kind is None:
                if m:
                    kind, start, body = m.group(1), n, []
            elif line.startswith("```"):
                out.append((kind, start, body))
                kind = None
            else:
                body.append(line)
    return out


def parse_session(lines):
    """The script (input lines) and the expected output lines of a block."""
    script, expected, last_input = [], [], False
    for line in lines:
        if line.startswith("sqlite> "):
            script.append(line[len("sqlite> "):])
            last_input = True
        elif last_input and CONT.match(line):
            script.append(CONT.sub("", line, count=1))
        else:
            expected.append(line)
            last_input = False
    return script, expected


def load_line(line):
    s = line.strip()
    if s.startswith(".load ") and s.split()[1] in ("./libgpuagg", "libgpuagg"):
        return ".load " + LIB
    return line


def run_cli(script, bail=False):
    text = "\n".join(load_line(l) for l in script) + "\n"
    with tempfile.TemporaryDirectory(prefix="gpuagg_docs_") as tmp:
        args = [SQLITE3] + (["-bail"] if bail else [])
        try:
            p = subprocess.run(args, input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               cwd=tmp, universal_newlines=True, timeout=300)
        except subprocess.TimeoutExpired:
            return 124, "timed out after 300 s"
    out = re.sub(r"^(Parse|Runtime) error near line \d+:", r"\1 error:", p.stdout, flags=re.M)
    return p.returncode, out


def line_matches(shown, got):
    shown, got = shown.rstrip(), got.rstrip()
    parts = WILD.split(shown)
    if len(parts) == 1:
        return shown == got
    return re.fullmatch(".*".join(re.escape(p) for p in parts), got, flags=re.S) is not None


def compare(expected, got_text):
    got = got_text.split("\n")
    if got and got[-1] == "":
        got.pop()
    while expected and expected[-1] == "":
        expected = expected[:-1]
    for i in range(max(len(expected), len(got))):
        e = expected[i] if i < len(expected) else "<nothing>"
        g = got[i] if i < len(got) else "<nothing>"
        if i >= len(expected) or i >= len(got) or not line_matches(e, g):
            return "output line %d: shown %r, got %r\n--- full output:\n%s" % (i + 1, e, g, got_text)
    return None


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    res, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            m = re.match(r"^#{1,6}\s+(.*)$", line)
            if m and not fenced:
                res.add(slug(m.group(1)))
    return res


def check_links(rep, path):
    bad, fenced, kept = [], False, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced:
                kept.append(line)
    text = "".join(kept)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append("%s: no such file" % target)
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append("%s: no such anchor" % target)
    rep.check("links:" + os.path.relpath(path, ROOT), not bad, "; ".join(bad))


def main():
    rep = Reporter("docs")
    if not os.path.exists(LIB + ".so"):
        print("FAIL [docs] %s.so does not exist (run make first)" % LIB)
        rep.failed += 1
        rep.finish()
    nsession = nsql = 0
    for path in doc_files():
        rel = os.path.relpath(path, ROOT)
        check_links(rep, path)
        for kind, start, body in blocks(path):
            name = "%s:%d" % (rel, start)
            if kind == "sqlite":
                script, expected = parse_session(body)
                if not script:
                    rep.check(name, False, "a ```sqlite block without a `sqlite> ` line")
                    continue
                rc, got = run_cli(script)
                diff = compare(expected, got)
                rep.check(name, diff is None, diff or "")
                nsession += 1
            elif kind == "sql":
                rc, got = run_cli([".load ./libgpuagg"] + body, bail=True)
                ok = rc == 0 and not re.search(r"^(Parse |Runtime )?[Ee]rror", got, flags=re.M)
                rep.check(name, ok, "exit status %d:\n%s" % (rc, got))
                nsql += 1
    print("docs: %d sqlite sessions, %d sql blocks checked" % (nsession, nsql))
    rep.finish()


if __name__ == "__main__":
    main()
