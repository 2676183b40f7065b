#!/usr/bin/env bash
# Runs the fail-stop test (test_netns_fail_stop) on two "hosts" made of
# network namespaces joined by a veth pair (two_hosts_lib.sh): ranks 0,1
# on A and 2,3 on B, tcp between the hosts, shm within; every departure
# of rank 2.
#
# Usage: run_fail_stop.sh PATH/TO/test_netns_fail_stop [gtest arguments]
# Needs root and iproute2's `ip`; otherwise prints "SKIP: ..." and exits 77.
# Exit status: the test's (0 passed, 1 failed), or 77 skipped.
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=two_hosts_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/two_hosts_lib.sh"

main() {
  local test=${1:-}
  [[ -x $test ]] || fail "usage: $0 PATH/TO/test_netns_fail_stop"
  shift
  check_netns_prerequisites
  bring_up_two_hosts
  # The test starts in the machine's namespace and moves each rank into
  # its host's; run in the background so that a signal to us cleans up at
  # once.
  env "${kClearEnv[@]}" \
    HETCCL_NETNS_HOSTS="/run/netns/$ns_a:$veth_a /run/netns/$ns_b:$veth_b" \
    "$test" "$@" &
  started_pids+=($!)
  wait "$!"
  local status=$?
  started_pids=()
  return "$status"
}

main "$@"
