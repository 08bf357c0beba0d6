#!/usr/bin/env bash
# Runs one rank of a multi-rank NCCL job that shares a single GPU with the
# other ranks: the launch environment of scripts/gpu_check.sh's 2- and 3-rank
# checks, never something ddpscope sets itself.
#
#   onegpu_rank.sh CMD [ARGS...]        (RANK set by the launcher)
#
# NCCL refuses two ranks on one device because their host hash and bus id
# match (its init's duplicate-GPU check). The host hash comes from
# NCCL_HOSTID when it is set, so a host id of its own per rank makes NCCL see
# separate hosts: they connect through its network transport (sockets on
# loopback), with real ring kernels, proxy threads and proxy steps.
set -euo pipefail
if [ -z "${RANK:-}" ]; then
  echo "onegpu_rank.sh: RANK is not set (run it under a launcher: ddpscope record --nproc N)" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  echo "onegpu_rank.sh: no command to run" >&2
  exit 2
fi
export NCCL_HOSTID="ddpscope-onegpu-rank-$RANK"
export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-lo}"
export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-1}"
exec "$@"
