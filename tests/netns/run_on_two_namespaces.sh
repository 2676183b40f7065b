#!/usr/bin/env bash
# Runs a test of this folder (test_netns_fail_stop, test_netns_call_mismatch)
# on two "hosts" made of network namespaces joined by a veth pair
# (two_hosts_lib.sh): it names them in HETCCL_NETNS_HOSTS, and the test
# moves its ranks in (two_namespaces.h), ranks 0,1 to A and 2,3 to B, tcp
# between the hosts, shm within.
#
# Usage: run_on_two_namespaces.sh PATH/TO/TEST [gtest arguments]
# Needs root and iproute2's `ip`; otherwise prints "SKIP: ..." and exits 77.
# Exit status: the test's (0 passed, 1 failed), or 77 skipped.
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=two_hosts_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/two_hosts_lib.sh"

main() {
  local test=${1:-}
  [[ -x $test ]] || fail "usage: $0 PATH/TO/TEST [gtest arguments]"
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
