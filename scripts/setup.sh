#!/usr/bin/env bash
# Installs what ddpscope needs, only what is missing: Debian's packages, then
# the pinned PyPI torch (scripts/torch-requirements.txt) into a virtual
# environment shared by the clones of this machine, linked as .venv.
# Idempotent and quiet when everything is already there.
#   scripts/setup.sh             everything scripts/test.sh needs
#   scripts/setup.sh --packages  Debian's packages only (scripts/test.sh builds
#                                while --venv downloads the PyPI torch)
#   scripts/setup.sh --venv      the PyPI torch only
#   scripts/setup.sh --demo      what scripts/demo.sh needs: the build's packages
#                                and Debian's torch, not the tests' own tools nor
#                                the 6 GB PyPI torch (docs/reliability.md has the times)
set -euo pipefail
cd "$(dirname "$0")/.."
demo=0 packages_step=1 venv_step=1
case "${1:-}" in
  "") ;;
  --demo) demo=1 venv_step=0 ;;
  --packages) venv_step=0 ;;
  --venv) packages_step=0 ;;
  *) echo "usage: $0 [--demo|--packages|--venv]" >&2; exit 2 ;;
esac

# What builds every target (the same for the demo, so that the build folder
# it configures is the one scripts/test.sh goes on with) and Debian's torch.
packages=(
  build-essential cmake ninja-build pkg-config
  ccache                   # the compiler cache every build goes through (CMakeLists.txt)
  libsqlite3-dev sqlite3 libcli11-dev catch2 nlohmann-json3-dev libfmt-dev
  zlib1g-dev               # deflates the Perfetto trace (reports/trace/zlib_deflate.h)
  libisal-dev              # deflates it fastest (ISA-L's igzip; the same file)
  libdeflate0              # else in half zlib's time, where present (the same file)
  libgloo-dev libopenmpi-dev openmpi-bin
  python3-torch
)
# What only the tests run.
test_packages=(
  chromium
  libxml2-utils iproute2   # xmllint and ip/tc for the check tests (tests/check)
  python3-venv             # for .venv when the python3 on PATH has no venv module
  clang-14 libclang-rt-14-dev  # libFuzzer, ASan, UBSan: the fuzz targets (tests/fuzz)
  prometheus prometheus-node-exporter  # the metrics path and the shipped rules (tests/contrib)
)
[ "$demo" -eq 1 ] || packages+=("${test_packages[@]}")

missing=()
[ "$packages_step" -eq 1 ] || packages=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi

[ "$venv_step" -eq 1 ] || exit 0

# The PyPI torch, in a virtual environment shared by every clone on this
# machine: it lives in the cache folder (like the compiler cache), one per set
# of requirements, and the clone's .venv links to it. A fresh clone then finds
# the 6 GB it needs already installed (CI runs on the machine that built the
# submission), and the disk holds one copy. A stamp holds the requirements it
# was made from and is written last, so a half-made one is made again.
req=scripts/torch-requirements.txt
cache="${DDPSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ddpscope}"
key="$(cat "$req" | sha256sum | cut -c1-16)"
venv="$cache/venv-$key"
mkdir -p "$cache"
# One setup at a time makes it (two clones set up at once wait here).
exec 9>"$cache/venv.lock"
flock 9
if ! cmp -s "$req" "$venv/.ddpscope-requirements" 2>/dev/null; then
  base=python3
  "$base" -c "import venv, ensurepip" 2>/dev/null || base=/usr/bin/python3
  echo "setup: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv (PyPI: ~6 GB installed with its CUDA libraries, ~3.5 GB more while downloading)"
  rm -rf "$venv" "$venv.tmp"
  "$base" -m venv "$venv"
  # No pip cache (it would keep a second copy of the 3.5 GB of wheels) and a
  # download folder of our own, removed whatever pip does: CI's disk is shared
  # and has run out here (2026-11-26: "No space left on device" in pip).
  mkdir -p "$venv.tmp"
  pip_status=0
  TMPDIR="$venv.tmp" "$venv/bin/pip" install -q --no-cache-dir \
    --disable-pip-version-check -r "$req" || pip_status=$?
  rm -rf "$venv.tmp"
  if [ "$pip_status" -ne 0 ]; then
    echo "setup: pip could not install $req into $venv (exit $pip_status);" \
      "$(df -h --output=avail "$cache" | tail -1 | tr -d ' ') free on $(df --output=target "$cache" | tail -1)," \
      "about 10 GB is needed while it installs" >&2
    rm -rf "$venv"
    exit 1
  fi
  cp "$req" "$venv/.ddpscope-requirements"
  echo "setup: $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)') in $venv"
fi
flock -u 9
# The clone's .venv: a link to the shared one (a folder left by an older
# setup is replaced).
if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
  rm -rf .venv .venv.tmp
  ln -s "$venv" .venv
fi
