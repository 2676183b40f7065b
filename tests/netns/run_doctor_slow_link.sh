#!/usr/bin/env bash
# hetccl-doctor across two "hosts" (network namespaces, two_hosts_lib.sh)
# whose link is throttled to 40 Mbit/s each way (tc's token bucket on both
# ends of the veth): ranks 0,1 on A and 2,3 on B form a domain per host;
# every check passes, but the probe of the link between them falls below
# the doctor's minimum, and rank 0's report names that link as the problem
# and says where to look; every rank exits 1.
#
# Usage: run_doctor_slow_link.sh PATH/TO/hetccl-doctor PORT
# Needs root, iproute2's `ip` and `tc` with the tbf qdisc; otherwise prints
# "SKIP: ..." and exits 77. Exit status: 0 passed, 1 failed, 77 skipped.
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=two_hosts_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/two_hosts_lib.sh"

readonly kRate=40mbit
readonly kTimeout=120

throttle() {
  local ns=$1 veth=$2
  timeout "$kIpTimeout" ip netns exec "$ns" tc qdisc add dev "$veth" root \
    tbf rate "$kRate" burst 32kb latency 200ms ||
    skip "tc cannot throttle the veth (no tbf qdisc?)"
}

# start_rank NS VETH RANK
start_rank() {
  local ns=$1 veth=$2 rank=$3
  ip netns exec "$ns" env "${kClearEnv[@]}" \
    RANK="$rank" WORLD_SIZE=4 LOCAL_RANK=$((rank % 2)) \
    HETCCL_COMM_ID="$addr_a:$port" HETCCL_SOCKET_IFNAME="=$veth" \
    HETCCL_TRANSPORT=tcp \
    timeout -k 5 "$kTimeout" "$doctor" --timeout $((kTimeout - 10)) \
    --probe-bytes 1M --json "$log_dir/report.json" \
    >"$log_dir/rank$rank.log" 2>&1 &
  started_pids+=($!)
}

main() {
  doctor=${1:-} port=${2:-29650}
  [[ -x $doctor ]] || fail "usage: $0 PATH/TO/hetccl-doctor PORT"
  check_netns_prerequisites
  command -v tc >/dev/null || skip "the tc command (iproute2) is missing"
  bring_up_two_hosts
  throttle "$ns_a" "$veth_a"
  throttle "$ns_b" "$veth_b"
  local rank status=0
  start_rank "$ns_a" "$veth_a" 0
  start_rank "$ns_a" "$veth_a" 1
  start_rank "$ns_b" "$veth_b" 2
  start_rank "$ns_b" "$veth_b" 3
  for rank in 0 1 2 3; do
    wait "${started_pids[$rank]}"
    local code=$?
    ((code == 1)) || { echo "rank $rank exited $code, expected 1"; status=1; }
  done
  started_pids=()
  cat "$log_dir/rank0.log"
  local pattern
  for pattern in \
    '4 ranks, 2 domains, 2 hosts' \
    'checks: every collective.*: 0 wrong' \
    'PROBLEM: the link between domains 0 and 1 carries 0\.0[0-9]+ GB/s, less than the 0\.1 GB/s expected of any link' \
    'not ready: 1 problem'; do
    grep -qE -- "$pattern" "$log_dir/rank0.log" ||
      { echo "rank 0's report does not match: $pattern"; status=1; }
  done
  grep -q '"ready":false' "$log_dir/report.json" ||
    { echo "the JSON report says ready"; status=1; }
  ((status == 0)) && echo "PASS: the doctor named the throttled link"
  return "$status"
}

main "$@"
