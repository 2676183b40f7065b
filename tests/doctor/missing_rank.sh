#!/usr/bin/env bash
# hetccl-doctor when a rank never starts: starts ranks 0 to N-2 of N as a
# launcher would (RANK, WORLD_SIZE, LOCAL_RANK, HETCCL_COMM_ID), never the
# last, with a short bootstrap timeout; rank 0's report must name the
# missing rank and every rank must exit 1 (a problem found).
#
#   missing_rank.sh HETCCL_DOCTOR NRANKS PORT
set -uo pipefail
doctor=$1 nranks=$2 port=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for ((rank = 0; rank < nranks - 1; ++rank)); do
  RANK=$rank WORLD_SIZE=$nranks LOCAL_RANK=$rank \
    HETCCL_COMM_ID=127.0.0.1:$port HETCCL_BOOTSTRAP_TIMEOUT=5 \
    timeout 60 "$doctor" --json "$work/report.json" >"$work/rank$rank.log" 2>&1 &
  pids+=($!)
done
status=0
for ((rank = 0; rank < nranks - 1; ++rank)); do
  wait "${pids[$rank]}"
  code=$?
  [[ $code -eq 1 ]] || { echo "rank $rank exited $code, expected 1"; status=1; }
done
cat "$work/rank0.log"
cat "$work/report.json"
grep -q "PROBLEM: the communicator could not be created:.*rank(s) $((nranks - 1)) never arrived; what to do: start every rank" "$work/rank0.log" ||
  { echo "rank 0's report does not name rank $((nranks - 1))"; status=1; }
grep -q '"ready":false' "$work/report.json" || { echo "the JSON says ready"; status=1; }
exit $status
