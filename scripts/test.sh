#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest.
# The last line is ctest's count of tests passed and failed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${DDPSCOPE_BUILD:-build}"
ctest --output-on-failure -j 2 "$@"
