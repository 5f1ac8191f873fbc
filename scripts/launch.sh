#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Starts N training processes on this machine with torchrun's environment variables (RANK,
# WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and waits for them:
#   scripts/launch.sh N build/bin/nmtzoo-train --config CONFIG [--set ...] [--resume]
# Rank 0 prints to the terminal; rank r logs to $NMTZOO_LOG_DIR/rank<r>.log (default: /tmp).
# Each rank gets $NMTZOO_THREADS_PER_RANK LibTorch threads (default: cores / N). When one rank
# fails, the others are stopped and the exit status is non-zero.
# Several machines: run the same command on each with MASTER_ADDR set to rank 0's address and
# NODE_RANK / NNODES set; ranks are NODE_RANK * N + local rank.
set -euo pipefail
(($# >= 2)) || { sed -n '2,10p' "$0"; exit 2; }
procs="$1"; shift
nnodes="${NNODES:-1}"
node_rank="${NODE_RANK:-0}"
export MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"
export MASTER_PORT="${MASTER_PORT:-29500}"
export WORLD_SIZE=$((procs * nnodes))
threads="${NMTZOO_THREADS_PER_RANK:-$(( $(nproc) / procs > 0 ? $(nproc) / procs : 1 ))}"
log_dir="${NMTZOO_LOG_DIR:-/tmp}"
pids=()
for ((local = 0; local < procs; local++)); do
  rank=$((node_rank * procs + local))
  if ((rank == 0)); then
    RANK=$rank LOCAL_RANK=$local "$@" --set "training.threads=$threads" &
  else
    RANK=$rank LOCAL_RANK=$local "$@" --set "training.threads=$threads" > "$log_dir/rank$rank.log" 2>&1 &
  fi
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null || true' INT TERM
status=0
for pid in "${pids[@]}"; do
  if ! wait "$pid"; then
    status=1
    kill "${pids[@]}" 2>/dev/null || true
  fi
done
exit $status
