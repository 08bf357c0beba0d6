#!/usr/bin/env bash
# Packs what scripts/model_check.sh needs on another machine (the lent GPU
# machine: 16 cores, root, none of our Debian packages) into build-model-carry/:
# this build's ddpscope with its Gloo backend, the Debian libraries it links
# (Gloo, MPI, SQLite and theirs), and iproute2's ip and tc with theirs, for a
# machine that has none. Each binary is started through a wrapper that points
# the loader at the carried libraries, so nothing else there sees them. The C
# runtime, the C++ runtime and zlib are the machine's own (newer there).
#
#   scripts/model_carry.sh     after scripts/build.sh; then carry build-model-carry
#                              and run scripts/model_check.sh there
#   DDPSCOPE_BUILD=DIR         the build to pack (default build)
#   MODEL_CARRY=DIR            where to pack it (default build-model-carry)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DDPSCOPE_BUILD:-build}"
carry="${MODEL_CARRY:-build-model-carry}"
[ -x "$build/ddpscope" ] || { echo "model_carry: no $build/ddpscope (run scripts/build.sh)" >&2; exit 2; }
rm -rf "$carry" && mkdir -p "$carry/lib" "$carry/net"

# The sonames the machine itself provides: its own are newer than Debian 12's.
own='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libz)\.'
carry_libraries() {  # the shared libraries of the binaries given, into $carry/lib
  ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r soname path; do
      [[ $soname =~ $own ]] || cp -L "$path" "$carry/lib/$soname"
    done
}
wrap() {  # the wrapper NAME of the real binary REAL, with libraries from LIBS
  # (REAL and LIBS relative to the wrapper's folder)
  printf '#!/bin/sh\nhere="$(dirname "$(readlink -f "$0")")"\n%s\n' \
    "LD_LIBRARY_PATH=\"\$here/$3\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" exec \"\$here/$2\" \"\$@\"" >"$1"
  chmod +x "$1"
}

strip -o "$carry/ddpscope.bin" "$build/ddpscope"
carry_libraries "$build/ddpscope"
wrap "$carry/ddpscope" ddpscope.bin lib
for tool in ip tc; do
  real="$(command -v "$tool" || echo "/usr/sbin/$tool")"
  cp "$real" "$carry/net/$tool.bin"
  carry_libraries "$real"
  wrap "$carry/net/$tool" "$tool.bin" ../lib
done
echo "built $carry: $(du -sh "$carry" | cut -f1) (carry it, then: scripts/model_check.sh $carry OUT_DIR)"
