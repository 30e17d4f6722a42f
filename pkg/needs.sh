#!/bin/sh
# pkg/needs.sh SO — what a built libgpuagg.so needs from the system it loads
# on, read from its dynamic section with objdump (binutils), as one line:
#   glibc 2.34+, libstdc++.so.6, libgcc_s.so.1
# The packages (mk/wheel.mk, mk/npm.mk) put this line into their metadata, and
# their tests compare it with this script's answer on the shipped .so, so the
# claim is measured, never typed.  Exit 2 without objdump or on a bad file.
set -eu
so=${1:?usage: pkg/needs.sh libgpuagg.so}
command -v objdump >/dev/null 2>&1 || { echo "needs.sh: objdump not found (binutils)" >&2; exit 2; }
# the highest GLIBC_x.y among the versioned symbols it imports
glibc=$(objdump -T "$so" | sed -n 's/.*(GLIBC_\([0-9][0-9.]*\)).*/\1/p' | sort -u -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
[ -n "$glibc" ] || { echo "needs.sh: no GLIBC symbol versions in $so" >&2; exit 2; }
# shared libraries beyond glibc's own (libc, libm, libdl, libpthread, librt, ld.so)
libs=$(objdump -p "$so" | awk '$1 == "NEEDED" { print $2 }' |
  grep -v -E '^(libc|libm|libdl|libpthread|librt)\.so|^ld-linux' | tr '\n' ' ' | sed 's/ $//; s/ /, /g')
printf 'glibc %s+%s\n' "$glibc" "${libs:+, $libs}"
