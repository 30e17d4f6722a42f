#!/usr/bin/env python3
"""compare_objects.py — does moving code change what it compiles to?

    compare_objects.py BEFORE_OBJDIR AFTER_OBJDIR [--only engine kernels]

For two builds of the library (`make LTO= CFLAGS=-O2 BUILD=...`, no -g),
disassembles every function of every object (`objdump -d -r`, addresses
and raw bytes left out, relocations kept by symbol name) and compares them
by function name, wherever the function's file now is: a function that
only moved must compile to the same instructions.  Device code is compared
by the bytes of each object's __nv_relfatbin section (informational: nvcc
embeds a hash of the source path in names, so compare the PTX of a .cu that
differs there).  Prints the functions that differ, those only on one side,
and a summary; exits 1 when a host function present on both sides
differs."""

import argparse
import os
import re
import subprocess
import sys

FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\s*(.*)$")
RELOC = re.compile(r"^\s*[0-9a-f]+:\s*(R_\S+)\s+(\S+)$")


def objects(root, only):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".o") and f != "dlink.o":
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                if not only or rel.split(os.sep)[0] in only:
                    out[rel] = os.path.join(dirpath, f)
    return out


def functions(obj):
    """{name: [normalised instruction lines]} of obj's text."""
    p = subprocess.run(["objdump", "-d", "-r", "--no-show-raw-insn", obj],
                       capture_output=True, text=True, check=True)
    funcs, cur = {}, None
    for line in p.stdout.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        r = RELOC.match(line)
        if r:
            # local labels (.LC3, .L12) are numbered per file: keep the kind
            sym = re.sub(r"\.L[A-Za-z]*\d+", ".L", r.group(2))
            cur.append("reloc %s %s" % (r.group(1), sym))
            continue
        m = INSN.match(line)
        if m:
            # jump and call targets inside the function are offsets from its
            # start; targets printed as <sym+off> keep the symbol
            insn = re.sub(r"\b[0-9a-f]+ <", "<", m.group(1))
            cur.append(re.sub(r"\s+", " ", insn).strip())
    # the padding after a function depends on what follows it in its file
    for body in funcs.values():
        while body and (body[-1].startswith("nop") or body[-1] in ("xchg %ax,%ax", "int3")):
            body.pop()
    return funcs


def fatbin(obj):
    """The device code of a relocatable CUDA object (nvcc -dc: section
    __nv_relfatbin; b"" for a host object)."""
    p = subprocess.run(["objcopy", "-O", "binary", "--only-section=__nv_relfatbin", obj,
                        "/dev/stdout"], capture_output=True)
    return p.stdout if p.returncode == 0 else b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--only", nargs="*", default=[], help="top folders to compare")
    a = ap.parse_args()
    sides = []
    for root in (a.before, a.after):
        funcs, fats = {}, {}
        for rel, path in objects(root, a.only).items():
            for name, body in functions(path).items():
                funcs.setdefault(name, (rel, body))
            fb = fatbin(path)
            if fb:
                fats[os.path.basename(rel)] = fb
        sides.append((funcs, fats))
    (fb_, fa_), (ff_, fa2) = sides[0], sides[1]
    same = differ = 0
    # nvcc's generated registration stubs and initialisers carry the
    # build's temporary file names and the source path's hash
    gen = re.compile(r"^(_ZL24__sti____cudaRegisterAll|_GLOBAL__sub_I_tmpxft)")
    fb_ = {k: v for k, v in fb_.items() if not gen.match(k)}
    ff_ = {k: v for k, v in ff_.items() if not gen.match(k)}
    for name in sorted(set(fb_) & set(ff_)):
        (r0, b0), (r1, b1) = fb_[name], ff_[name]
        if b0 == b1:
            same += 1
        else:
            differ += 1
            print("DIFFERS  %s  (%s -> %s)" % (name, r0, r1))
    for name in sorted(set(fb_) - set(ff_)):
        print("BEFORE ONLY  %s  (%s)" % (name, fb_[name][0]))
    for name in sorted(set(ff_) - set(fb_)):
        print("AFTER ONLY   %s  (%s)" % (name, ff_[name][0]))
    fat_same = sum(1 for k in fa_ if k in fa2 and fa_[k] == fa2[k])
    fat_diff = [k for k in fa_ if k in fa2 and fa_[k] != fa2[k]]
    for k in fat_diff:
        # nvcc names internal symbols after a hash of the source's path, so
        # a moved or rebuilt-elsewhere .cu differs here: compare its PTX
        # (nvcc -ptx, names normalised) to tell
        print("DEVICE CODE DIFFERS  %s  (note: also when only its path changed)" % k)
    print("functions: %d the same, %d differ, %d before only, %d after only; device code: "
          "%d objects the same, %d differ"
          % (same, differ, len(set(fb_) - set(ff_)), len(set(ff_) - set(fb_)), fat_same,
             len(fat_diff)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
