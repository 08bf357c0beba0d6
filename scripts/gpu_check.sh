#!/usr/bin/env bash
# The GPU path, checked on a machine with one NVIDIA GPU, PyTorch with CUDA and
# NCCL: records examples/ddp_train.py --device cuda (world size 1, NCCL) under
# `ddpscope record` and asserts what CUPTI, NVTX and the CUDA hooks must give.
# Prints a short table; exits 1 on the first failed check.
#
#   scripts/gpu_check.sh [BUILD_DIR] [--keep DIR]   (default: build-gpu-carry, build-gpu, else build)
#
# Build here with scripts/gpu_build.sh, carry build-gpu-carry/ to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build="$1"
  shift
fi
if [ -z "$build" ]; then
  for build in build-gpu-carry build-gpu build; do
    [ -x "$build/ddpscope" ] && break
  done
fi
python=""
for p in python3 python /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    python="$(command -v "$p")"
    break
  fi
done
if [ -z "$python" ]; then
  echo "gpu_check: no Python with a CUDA-enabled torch and a visible GPU" >&2
  exit 2
fi
exec "$python" scripts/gpu_check.py --build "$build" "$@"
