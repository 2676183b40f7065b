#!/usr/bin/env bash
# Where the pass-through's extra microseconds come from: the overhead tool
# with each side alone, in separate processes, and hetccl-perf both ways a
# few times (each process placement differs). Needs a build from
# tests/gpu/run.sh (BUILD_DIR).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$repo/build-gpu}
export NCCL_NVLS_ENABLE=0
py=${PYTHON:-python3}
helpers=(env PYTHONPATH="$repo/bench" "$py" -c)
nccl=$("${helpers[@]}" 'import gpu_sweep as g; print(g.find_nvidia_nccl(None))')
cudart=$("${helpers[@]}" 'import gpu_sweep as g; print(":".join(g.cuda_runtime_dirs()))')
export LD_LIBRARY_PATH="$cudart${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for round in 1 2; do
  for sides in direct hetccl direct-after-hetccl both; do
    echo "== $sides (round $round)"
    timeout 60 "$build/passthrough_overhead" "$nccl" 1024 11 400 "$sides" |
      grep -E '^rank 0|^allreduce|^allgather|^broadcast'
  done
done
for round in 1 2 3; do
  for impl in native hetccl; do
    extra=()
    [[ $impl == native ]] && extra=(--nccl-library "$nccl")
    HETCCL_NCCL_LIBRARY=$nccl timeout 60 "$build/tools/hetccl-perf" -np 2 \
      -b 1K -e 1K -w 500 -n 5000 --check 0 --placement out -x allgather \
      --json /tmp/probe.json "${extra[@]}" >/dev/null 2>&1
    echo "hetccl-perf allgather 1K $impl: $(grep -o '"time_us":[0-9.]*' /tmp/probe.json | head -1)"
    rm -f /tmp/probe.json
  done
done
