#!/usr/bin/env bash
# hetccl-doctor in a job that is not ready: starts the ranks as a launcher
# would (RANK, WORLD_SIZE, LOCAL_RANK, HETCCL_COMM_ID), some of them with
# settings of their own or not at all; every rank started must exit 1 (a
# problem found), rank 0's report must match every expected pattern
# (grep -E, on one line each) and its JSON must say it is not ready.
#
#   job.sh --doctor PATH --ranks N --port PORT --expect REGEX...
#          [--skip RANK] [--rank-env RANK VAR=VALUE]... [-- DOCTOR ARGS]
set -uo pipefail
doctor="" nranks=0 port=0 skip=-1
expects=() rank_env=() doctor_args=()
while (($#)); do
  case $1 in
  --doctor) doctor=$2; shift 2 ;;
  --ranks) nranks=$2; shift 2 ;;
  --port) port=$2; shift 2 ;;
  --expect) expects+=("$2"); shift 2 ;;
  --skip) skip=$2; shift 2 ;;
  --rank-env) rank_env[$2]+=" $3"; shift 3 ;;
  --) shift; doctor_args=("$@"); break ;;
  *) echo "unknown argument $1"; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for ((rank = 0; rank < nranks; ++rank)); do
  ((rank == skip)) && continue
  read -r -a own <<<"${rank_env[$rank]:-}"
  env RANK=$rank WORLD_SIZE=$nranks LOCAL_RANK=$rank \
    HETCCL_COMM_ID=127.0.0.1:$port "${own[@]}" \
    timeout 100 "$doctor" --json "$work/report.json" "${doctor_args[@]}" \
    >"$work/rank$rank.log" 2>&1 &
  pids[$rank]=$!
done
status=0
for rank in "${!pids[@]}"; do
  wait "${pids[$rank]}"
  code=$?
  [[ $code -eq 1 ]] || { echo "rank $rank exited $code, expected 1"; status=1; }
done
for rank in "${!pids[@]}"; do
  echo "---- rank $rank ----"
  cat "$work/rank$rank.log"
done
cat "$work/report.json"
echo
for pattern in "${expects[@]}"; do
  grep -qE -- "$pattern" "$work/rank0.log" ||
    { echo "rank 0's report does not match: $pattern"; status=1; }
done
grep -q '"ready":false' "$work/report.json" || { echo "the JSON says ready"; status=1; }
exit $status
