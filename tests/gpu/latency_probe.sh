#!/usr/bin/env bash
# Why small collectives through HetCCL's pass-through take longer than
# NVIDIA's NCCL called directly (bench/results/gpu-sweep-2026-11-29.md: +2 to
# +3.5 us for all-gather, reduce-scatter, broadcast and all-to-all below
# 64 KB; all-reduce mostly within 1 us). Runs each collective at 1 KB both
# ways with NCCL's tuning log, so that the algorithm, protocol and channel
# choices of the two communicators can be compared, and prints the times.
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
perf=("$build/tools/hetccl-perf" -np 2 -b 1K -e 1K -w 200 -n 5000 --check 0
  --placement out)

for coll in allreduce allgather reducescatter broadcast alltoall; do
  for impl in native hetccl; do
    extra=()
    [[ $impl == native ]] && extra=(--nccl-library "$real_nccl")
    log=$out/$coll-$impl.log
    HETCCL_NCCL_LIBRARY=$real_nccl NCCL_DEBUG=INFO \
      NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV timeout 120 "${perf[@]}" -x "$coll" \
      "${extra[@]}" >"$log" 2>&1
    time_us=$(grep -E '^ +1024 ' "$log" | awk '{print $6}' | head -1)
    channels=$(grep -oE 'nChannels [0-9]+|[0-9]+ coll channels' "$log" | sort -u | tr '\n' ' ')
    echo "$coll $impl: ${time_us:-?} us; $channels"
  done
done
echo "logs in $out; compare e.g. diff <(grep -i tuning $out/allgather-native.log) <(grep -i tuning $out/allgather-hetccl.log)"
