# shellcheck shell=bash disable=SC2034  # the sourcing script uses the names
# Two "hosts" made of Linux network namespaces joined by a veth pair, for
# the scripts of this folder (sourced, not run). HetCCL's host id includes
# the network namespace, so each namespace is a host of its own.
#
# A script sets `layout_timeout` if it checks it, calls
# check_netns_prerequisites, then bring_up_two_hosts: from then on, exit,
# SIGINT and SIGTERM stop the processes listed in `started_pids`, kill
# anything left inside the namespaces and delete them (with the veth).
# Names carry the script's PID, so that concurrent runs never collide.

readonly kSkip=77
readonly kIpTimeout=10

# Interface names must fit in 15 characters.
readonly ns_a="hetccl-a-$$"
readonly ns_b="hetccl-b-$$"
readonly veth_a="hva$$"
readonly veth_b="hvb$$"
readonly subnet="10.231.$((RANDOM % 256))"
readonly addr_a="$subnet.1"
readonly addr_b="$subnet.2"

# `env` arguments that clear the settings that would change what is tested
# (host identity, domains, transport, socket family, other launchers' rank
# variables), for every process started in the namespaces.
kClearEnv=()
for variable in HETCCL_HOSTID HETCCL_DOMAINS HETCCL_TRANSPORT \
  HETCCL_SOCKET_FAMILY NCCL_SOCKET_FAMILY NCCL_COMM_ID OMPI_COMM_WORLD_RANK \
  PMI_RANK SLURM_PROCID MASTER_ADDR MASTER_PORT HETCCL_PERF_RANK; do
  kClearEnv+=(-u "$variable")
done
readonly kClearEnv

created_namespaces=()
started_pids=()
log_dir=""

skip() {
  echo "SKIP: $*"
  exit "$kSkip"
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# Every ip command is bounded, so that a wedged netlink call cannot hang us.
ipt() {
  timeout "$kIpTimeout" ip "$@"
}

# Asks the processes we started and that still run to stop, then kills
# those that do not within a few seconds.
kill_started() {
  local pid tries
  ((${#started_pids[@]})) || return 0
  kill -TERM "${started_pids[@]}" 2>/dev/null
  for ((tries = 0; tries < 50; ++tries)); do
    [[ -n $(jobs -rp) ]] || break # they are our only jobs
    sleep 0.1
  done
  for pid in "${started_pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  started_pids=()
}

# Anything still running inside our namespaces was started by us (they are
# private to this run): stop it by PID before the namespace goes away.
kill_namespace_processes() {
  local ns=$1 pid
  for pid in $(ipt netns pids "$ns" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null
  done
}

cleanup() {
  local ns
  trap - EXIT INT TERM
  kill_started
  for ns in "${created_namespaces[@]}"; do
    kill_namespace_processes "$ns"
    ipt netns del "$ns" 2>/dev/null # also removes its end of the veth
  done
  [[ -n $log_dir ]] && rm -rf "$log_dir"
}

# A run killed with SIGKILL (e.g. by ctest's timeout) cannot clean up;
# remove namespaces of earlier runs of these scripts whose process is gone.
remove_stale_namespaces() {
  local ns pid
  for ns in $(ipt netns list 2>/dev/null | awk '{print $1}'); do
    [[ $ns =~ ^hetccl-[ab]-([0-9]+)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    # Ours do not exist yet, so one with our PID is from an earlier process.
    [[ $pid != "$$" ]] && kill -0 "$pid" 2>/dev/null && continue
    echo "removing stale namespace $ns"
    kill_namespace_processes "$ns"
    ipt netns del "$ns" 2>/dev/null
  done
}

check_netns_prerequisites() {
  [[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
  command -v ip >/dev/null || skip "the ip command (iproute2) is missing"
  command -v timeout >/dev/null || skip "the timeout command is missing"
}

create_namespace() {
  local ns=$1
  ipt netns add "$ns" 2>/dev/null || skip "cannot create network namespaces" \
    "(ip netns add $ns failed)"
  created_namespaces+=("$ns")
}

setup_network() {
  create_namespace "$ns_a"
  create_namespace "$ns_b"
  # Created directly inside the namespaces: the host's own network never
  # sees these interfaces or the test subnet.
  ipt link add name "$veth_a" netns "$ns_a" type veth \
    peer name "$veth_b" netns "$ns_b" ||
    skip "cannot create a veth pair between network namespaces"
  if ! { ipt -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" &&
    ipt -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" &&
    ipt -n "$ns_a" link set lo up && ipt -n "$ns_b" link set lo up &&
    ipt -n "$ns_a" link set "$veth_a" up &&
    ipt -n "$ns_b" link set "$veth_b" up; }; then
    fail "cannot configure the veth pair"
  fi
  # The carrier comes up a moment after both ends: UCX, unlike the tcp
  # transport, skips an interface that is not running yet.
  local tries
  for ((tries = 0; tries < 50; ++tries)); do
    [[ $(veth_state "$ns_a" "$veth_a") == up &&
      $(veth_state "$ns_b" "$veth_b") == up ]] && break
    sleep 0.1
  done
  echo "host A: namespace $ns_a, $veth_a $addr_a/24"
  echo "host B: namespace $ns_b, $veth_b $addr_b/24"
}

# veth_state NS VETH: the interface's operstate (up once it carries).
veth_state() {
  timeout "$kIpTimeout" ip netns exec "$1" cat "/sys/class/net/$2/operstate"
}

# Sets the traps, removes what killed runs left, makes a log directory and
# the two hosts.
bring_up_two_hosts() {
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  remove_stale_namespaces
  log_dir=$(mktemp -d) || fail "cannot create a log directory"
  setup_network
}
