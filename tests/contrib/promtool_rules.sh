#!/usr/bin/env bash
# promtool's syntax check of the shipped rules, then their unit tests
# (DIR/ddpscope.rules.test.yml: each alert fires when it should and not
# before its `for`). Exit 77 (Skipped) without promtool.
set -euo pipefail
dir="$1"
command -v promtool >/dev/null || { echo "SKIPPED: promtool is not installed (Debian's prometheus)"; exit 77; }
cd "$dir"
promtool check rules ddpscope.rules.yml
promtool test rules ddpscope.rules.test.yml
