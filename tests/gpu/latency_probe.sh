#!/usr/bin/env bash
# Why small collectives through HetCCL's pass-through take longer than
# NVIDIA's NCCL called directly (bench/results/gpu-sweep-2026-11-29.md: +2 to
# +3.5 us for all-gather, reduce-scatter, broadcast and all-to-all below
# 64 KB; all-reduce mostly within 1 us). For each collective at 1 KB, both
# ways, it prints the time per launch, the host time spent in the launch
# calls (enqueue; close to the time when the host is the limit) and the
# time with a synchronisation after every launch (blocking), then the
# difference between the two NCCL setup logs (channels, protocols,
# thresholds), with addresses, times and process ids taken out.
# Needs 2 NVIDIA GPUs and a build from tests/gpu/run.sh (BUILD_DIR).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$repo/build-gpu}
out=${OUT:-/tmp/hetccl-latency}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
py=${PYTHON:-python3}
real_nccl=$(PYTHONPATH="$repo/bench" "$py" -c 'import gpu_sweep as g; print(g.find_nvidia_nccl(None))')
cudart_dirs=$(PYTHONPATH="$repo/bench" "$py" -c 'import gpu_sweep as g; print(":".join(g.cuda_runtime_dirs()))')
export LD_LIBRARY_PATH="$cudart_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
size=${SIZE:-1K}

# run COLL IMPL MODE: one hetccl-perf run; MODE is "stream" or "blocking".
run() {
  local coll=$1 impl=$2 mode=$3 extra=()
  [[ $impl == native ]] && extra+=(--nccl-library "$real_nccl")
  [[ $mode == blocking ]] && extra+=(-z)
  local name=$out/$coll-$impl-$mode
  HETCCL_NCCL_LIBRARY=$real_nccl NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH timeout 120 \
    "$build/tools/hetccl-perf" -np 2 -b "$size" -e "$size" -w 500 -n 5000 \
    --check 0 --placement out -x "$coll" --json "$name.json" "${extra[@]}" \
    >"$name.log" 2>&1
  "$py" - "$name.json" "$coll" "$impl" "$mode" <<'EOF'
import json, sys
path, coll, impl, mode = sys.argv[1:]
try:
    rec = json.loads(open(path).readline())
    print(f"{coll:14s} {impl:7s} {mode:8s} time {rec['time_us']:7.2f} us  "
          f"enqueue {rec['enqueue_us']:7.2f} us")
except (OSError, ValueError, KeyError) as e:
    print(f"{coll:14s} {impl:7s} {mode:8s} no result ({e})")
EOF
}

# NCCL's setup lines of a log, without what differs from run to run.
setup_lines() {
  grep -E 'NCCL INFO' "$1" | sed -E 's/^[^ ]+ +//; s/[0-9]+:[0-9]+ \[[0-9]+\]//;
    s/0x[0-9a-f]+/ADDR/g; s/[0-9]+\.[0-9]+ ?(ms|s|us)/TIME/g;
    s/pid [0-9]+/pid N/g' | sort -u
}

for coll in allreduce allgather reducescatter broadcast alltoall; do
  for impl in native hetccl; do
    for mode in stream blocking; do run "$coll" "$impl" "$mode"; done
  done
done
echo "--- NCCL setup, native (<) vs through HetCCL (>), allgather"
diff <(setup_lines "$out/allgather-native-stream.log") \
  <(setup_lines "$out/allgather-hetccl-stream.log") | head -80
echo "logs in $out"
