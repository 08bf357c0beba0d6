#!/usr/bin/env bash
# Installs what ddpscope needs, only what is missing: Debian's packages, then
# the pinned PyPI torch (scripts/torch-requirements.txt) into .venv/.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3 libcli11-dev catch2 nlohmann-json3-dev libfmt-dev
  zlib1g-dev               # deflates the Perfetto trace (reports/trace_perfetto.cpp)
  libgloo-dev libopenmpi-dev openmpi-bin
  python3-torch
  chromium
  libxml2-utils iproute2   # xmllint and ip/tc for the check tests (tests/check)
  python3-venv             # for .venv when the python3 on PATH has no venv module
  clang-14 libclang-rt-14-dev  # libFuzzer, ASan, UBSan: the fuzz targets (tests/fuzz)
)

missing=()
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

# The PyPI torch, in a virtual environment of the project's own. A stamp holds
# the requirements it was made from, so a changed pin re-installs.
venv=.venv
req=scripts/torch-requirements.txt
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
  TMPDIR="$PWD/$venv.tmp" "$venv/bin/pip" install -q --no-cache-dir \
    --disable-pip-version-check -r "$req" || pip_status=$?
  rm -rf "$venv.tmp"
  if [ "$pip_status" -ne 0 ]; then
    echo "setup: pip could not install $req into $venv (exit $pip_status);" \
      "$(df -h --output=avail . | tail -1 | tr -d ' ') free on $(df --output=target . | tail -1)," \
      "about 10 GB is needed while it installs" >&2
    rm -rf "$venv"
    exit 1
  fi
  cp "$req" "$venv/.ddpscope-requirements"
  echo "setup: $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)') in $venv"
fi
