#!/usr/bin/env bash
# Installs what ddpscope needs from Debian's packages, only what is missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3 libcli11-dev catch2 nlohmann-json3-dev libfmt-dev
  libgloo-dev libopenmpi-dev openmpi-bin
  python3-torch
  chromium
  libxml2-utils iproute2   # xmllint and ip/tc for the check tests (tests/check)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
