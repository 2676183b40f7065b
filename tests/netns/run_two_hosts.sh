#!/usr/bin/env bash
# Runs hetccl-perf on two "hosts" made of Linux network namespaces joined by
# a veth pair, and checks that
#   - every collective, type and op gives right results across the two hosts
#     (hetccl-perf's own check; every rank must exit 0),
#   - HetCCL put the ranks of each namespace in one domain (2 domains),
#     and rank 0's topology map says so (hosts, domains, transport),
#   - the cross-domain bytes really went over the veth (tcp transport), not
#     through shared memory, which the namespaces still share.
# Layouts: 2+2 (ranks 0,1 in A; 2,3 in B), then 3+1 (ranks 0,1,2 in A; 3 in B).
#
# Usage: run_two_hosts.sh PATH/TO/hetccl-perf
# Needs root and iproute2's `ip`; otherwise prints "SKIP: ..." and exits 77.
# Exit status: 0 passed, 1 failed, 77 skipped.
#
# Environment (all optional):
#   HETCCL_NETNS_LAYOUTS    layouts to run (default "2+2 3+1")
#   HETCCL_NETNS_PERF_ARGS  the sweep (default: every collective, float32 and
#                           bfloat16, every op, 1K..1M, checked)
#   HETCCL_NETNS_MIN_BYTES  bytes each direction of the veth must carry per
#                           layout (default 48 MiB with the default sweep,
#                           see below; 1 MiB with HETCCL_NETNS_PERF_ARGS)
#   HETCCL_NETNS_TIMEOUT    seconds one layout may take (default 120)
#   HETCCL_NETNS_PORT       first rendezvous port (default 29500; one per layout)
#   HETCCL_NETNS_RANK_ENV   VAR=value words given to every rank after the
#                           clearing below (e.g. "HETCCL_EMULATED_GPU=1
#                           HETCCL_DOMAINS=host": GPU ranks emulated on the
#                           host, one domain per namespace, so the GPU engine
#                           crosses the veth); @VETH@ and @ADDR@ in them
#                           become the rank's veth and its address (e.g.
#                           FI_TCP_IFACE=@VETH@ for a net plugin over
#                           libfabric)
#   HETCCL_DEBUG            passed through to the ranks
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=two_hosts_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/two_hosts_lib.sh"

readonly kDefaultSweep="-x all -d float32,bfloat16 -o all -b 1K -e 1M -f 32 \
-w 1 -n 2 --check 1"
# A lower bound on the payload of the default sweep, per direction of the
# link: in an all-reduce across two domains each element's value (or partial
# sum) must cross one way and its result the other way, so an all-reduce of
# S bytes moves at least S bytes each way. The default sweep alone times 48
# all-reduces of 1 MiB (6 ops x 2 types x 2 placements x 2 iterations), so
# at least 48 MiB each way; the whole sweep moves several times more.
# Bootstrap traffic is a few KiB, so traffic that bypassed the network (e.g.
# through shared memory) cannot pass.
readonly kDefaultSweepMinBytes=$((48 * 1024 * 1024))
readonly kCustomSweepMinBytes=$((1024 * 1024))

perf=${1:-}
layouts=${HETCCL_NETNS_LAYOUTS:-"2+2 3+1"}
if [[ -n ${HETCCL_NETNS_PERF_ARGS:-} ]]; then
  sweep=$HETCCL_NETNS_PERF_ARGS
  min_bytes=${HETCCL_NETNS_MIN_BYTES:-$kCustomSweepMinBytes}
else
  sweep=$kDefaultSweep
  min_bytes=${HETCCL_NETNS_MIN_BYTES:-$kDefaultSweepMinBytes}
fi
layout_timeout=${HETCCL_NETNS_TIMEOUT:-120}
first_port=${HETCCL_NETNS_PORT:-29500}

check_prerequisites() {
  [[ -n $perf ]] || fail "usage: $0 PATH/TO/hetccl-perf"
  [[ -x $perf ]] || fail "$perf is not an executable"
  check_netns_prerequisites
  if ! [[ $layout_timeout =~ ^[0-9]+$ ]] || ((layout_timeout < 20)); then
    fail "HETCCL_NETNS_TIMEOUT=$layout_timeout: expected whole seconds >= 20"
  fi
}

# veth_bytes tx|rx: bytes the veth of namespace A has sent or received.
veth_bytes() {
  timeout "$kIpTimeout" ip netns exec "$ns_a" \
    cat "/sys/class/net/$veth_a/statistics/$1_bytes"
}

# start_rank NS VETH RANK NRANKS LOCAL_RANK PORT: one hetccl-perf rank in the
# background, with torchrun's variables (they take precedence over any other
# launcher's in hetccl-perf), without the settings of kClearEnv.
start_rank() {
  local ns=$1 veth=$2 rank=$3 nranks=$4 local_rank=$5 port=$6
  local -a sweep_args rank_env
  read -r -a sweep_args <<<"$sweep"
  read -r -a rank_env <<<"${HETCCL_NETNS_RANK_ENV:-}"
  local addr=$addr_a
  [[ $ns == "$ns_b" ]] && addr=$addr_b
  rank_env=("${rank_env[@]//@VETH@/$veth}")
  rank_env=("${rank_env[@]//@ADDR@/$addr}")
  ip netns exec "$ns" env "${kClearEnv[@]}" \
    RANK="$rank" WORLD_SIZE="$nranks" LOCAL_RANK="$local_rank" \
    HETCCL_COMM_ID="$addr_a:$port" HETCCL_SOCKET_IFNAME="=$veth" \
    "${rank_env[@]}" \
    timeout -k 5 "$layout_timeout" "$perf" "${sweep_args[@]}" \
    --timeout "$((layout_timeout - 10))" \
    >"$log_dir/rank$rank.log" 2>&1 &
  started_pids+=($!)
}

# check_domains LOG COUNT_A NRANKS: rank 0's device table must show two
# domains, ranks [0, COUNT_A) in one and the others in the other.
check_domains() {
  local log=$1 count_a=$2 nranks=$3
  awk -v count_a="$count_a" -v nranks="$nranks" '
    $1 == "#" && $2 == "Rank" {
      for (i = 1; i <= NF; ++i) if ($i == "domain") break
      if (i > NF || $(i + 2) != "of") { print "no domain on: " $0; bad = 1; next }
      seen++
      if ($(i + 3) != 2) { print "rank " $3 ": " $(i + 3) " domains, not 2"; bad = 1 }
      side = ($3 < count_a) ? "A" : "B"
      if (side in domain_of && domain_of[side] != $(i + 1)) {
        print "host " side " ranks are in domains " domain_of[side] " and " $(i + 1)
        bad = 1
      }
      domain_of[side] = $(i + 1)
    }
    END {
      if (seen != nranks) { print "device table lists " seen " of " nranks " ranks"; bad = 1 }
      if (domain_of["A"] == domain_of["B"]) { print "hosts A and B share a domain"; bad = 1 }
      exit bad
    }' "$log"
}

# check_topology LOG COUNT_A COUNT_B: rank 0's header must map the ranks of
# each namespace to a host and a domain of their own, linked by the
# transport the ranks were given (tcp unless HETCCL_NETNS_RANK_ENV forces
# another).
check_topology() {
  local log=$1 count_a=$2 count_b=$3
  local nranks=$((count_a + count_b)) transport=tcp line
  [[ ${HETCCL_NETNS_RANK_ENV:-} =~ HETCCL_TRANSPORT=([a-z]+) ]] &&
    transport=${BASH_REMATCH[1]}
  local -a expected=(
    "$nranks ranks, 2 domains, 2 hosts"
    "domain 0: $(rank_range 0 "$count_a") on host 0,"
    "domain 1: $(rank_range "$count_a" "$nranks") on host 1,"
    "domains 0 and 1 linked by $transport ($((count_a * count_b)) rank pairs)"
  )
  for line in "${expected[@]}"; do
    grep -qF -- "#  $line" "$log" || {
      echo "the header's topology lacks: $line"
      return 1
    }
  done
}

# rank_range FIRST END: "rank 3" or "ranks 0-2" for [FIRST, END).
rank_range() {
  local first=$1 last=$(($2 - 1))
  if ((first == last)); then echo "rank $first"; else echo "ranks $first-$last"; fi
}

print_failed_logs() {
  local nranks=$1 rank
  for ((rank = 0; rank < nranks; ++rank)); do
    echo "---- rank $rank log (last 30 lines) ----"
    tail -n 30 "$log_dir/rank$rank.log"
  done
}

# run_layout COUNT_A COUNT_B PORT
run_layout() {
  local count_a=$1 count_b=$2 port=$3
  local nranks=$((count_a + count_b)) rank pid status failed=0
  echo
  echo "==== layout $count_a+$count_b: ranks 0..$((count_a - 1)) on A," \
    "$count_a..$((nranks - 1)) on B ===="
  local tx_before rx_before
  tx_before=$(veth_bytes tx) || fail "cannot read the counters of $veth_a"
  rx_before=$(veth_bytes rx) || fail "cannot read the counters of $veth_a"

  for ((rank = 0; rank < nranks; ++rank)); do
    if ((rank < count_a)); then
      start_rank "$ns_a" "$veth_a" "$rank" "$nranks" "$rank" "$port"
    else
      start_rank "$ns_b" "$veth_b" "$rank" "$nranks" "$((rank - count_a))" \
        "$port"
    fi
  done
  rank=0
  for pid in "${started_pids[@]}"; do
    wait "$pid"
    status=$?
    if ((status != 0)); then
      echo "rank $rank exited with status $status"
      failed=1
    fi
    rank=$((rank + 1))
  done
  started_pids=()

  cat "$log_dir/rank0.log"
  if ((failed)); then
    print_failed_logs "$nranks"
    fail "layout $count_a+$count_b: some ranks failed"
  fi
  check_domains "$log_dir/rank0.log" "$count_a" "$nranks" ||
    fail "layout $count_a+$count_b: ranks not split into one domain per host"
  check_topology "$log_dir/rank0.log" "$count_a" "$count_b" ||
    fail "layout $count_a+$count_b: the topology map is not what was built"

  local tx_after rx_after
  tx_after=$(veth_bytes tx) || fail "cannot read the counters of $veth_a"
  rx_after=$(veth_bytes rx) || fail "cannot read the counters of $veth_a"
  local sent=$((tx_after - tx_before)) received=$((rx_after - rx_before))
  echo "veth: A->B $sent bytes, B->A $received bytes" \
    "(at least $min_bytes each way expected)"
  ((sent >= min_bytes && received >= min_bytes)) ||
    fail "layout $count_a+$count_b: too little traffic crossed the veth;" \
      "the cross-domain links did not use the network"
  echo "layout $count_a+$count_b: ok"
}

main() {
  check_prerequisites
  bring_up_two_hosts

  local layout port=$first_port
  for layout in $layouts; do
    [[ $layout =~ ^([1-9][0-9]*)\+([1-9][0-9]*)$ ]] ||
      fail "layout '$layout' is not A+B (e.g. 2+2)"
    run_layout "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$port"
    port=$((port + 1))
  done
  echo
  echo "PASS: all layouts ($layouts) ran across two network namespaces"
}

main
