#!/usr/bin/env bash
# The GPU checks in one command, for a machine with 2 NVIDIA GPUs, CUDA and
# PyTorch: builds HetCCL, shows hetccl-info, runs every PyTorch collective
# with NVIDIA's NCCL and again with HetCCL preloaded as libnccl.so.2 and
# compares the results bit for bit, then measures all-reduce both ways.
# Without a GPU it says so and exits 0.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/hetccl-gpu}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

if ! python3 -c 'import torch,sys; sys.exit(torch.cuda.device_count() < 2)' \
  2>/dev/null; then
  echo "SKIP: tests/gpu/run.sh needs PyTorch and 2 CUDA GPUs"
  exit 0
fi

build=$repo/build-gpu
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHETCCL_BUILD_TESTS=OFF -DHETCCL_BUILD_BENCH=OFF >"$out/cmake.log"
cmake --build "$build" -j "$(nproc)" >"$out/build.log"
"$build/tools/hetccl-info"

real_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))')
preload=(env LD_PRELOAD="$build/src/libnccl.so.2" HETCCL_NCCL_LIBRARY="$real_nccl")
torchrun=(python3 -m torch.distributed.run --nproc-per-node 2)

echo "== PyTorch collectives: NVIDIA NCCL, then HetCCL"
"${torchrun[@]}" "$repo/tests/gpu/torch_collectives.py" >"$out/native.log" 2>&1
"${preload[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,ENV HETCCL_DEBUG=INFO \
  "${torchrun[@]}" "$repo/tests/gpu/torch_collectives.py" >"$out/hetccl.log" 2>&1
grep -h "HETCCL\|NCCL WARN" "$out/hetccl.log" | head -30 || true
native=$(grep '^RESULTS' "$out/native.log")
hetccl=$(grep '^RESULTS' "$out/hetccl.log")
if [[ "$native" == "$hetccl" ]]; then
  echo "collectives: HetCCL results equal NVIDIA NCCL's bit for bit ($(grep -o '@' <<<"$native" | wc -l) results)"
else
  echo "collectives: MISMATCH"; echo "native: $native"; echo "hetccl: $hetccl"
  exit 1
fi

echo "== all-reduce busbw: NVIDIA NCCL vs HetCCL pass-through"
"${torchrun[@]}" "$repo/tests/gpu/torch_allreduce_bench.py" native >"$out/bench-native.log" 2>&1
"${preload[@]}" "${torchrun[@]}" "$repo/tests/gpu/torch_allreduce_bench.py" hetccl >"$out/bench-hetccl.log" 2>&1
paste <(grep '^BENCH' "$out/bench-native.log" | awk '{print $3, $4, $5}') \
      <(grep '^BENCH' "$out/bench-hetccl.log" | awk '{print $4, $5}') |
  awk 'BEGIN {print "bytes native_us native_busbw hetccl_us hetccl_busbw ratio"}
       {printf "%s %s %s %s %s %.3f\n", $1, $2, $3, $4, $5, ($3 > 0 ? $5 / $3 : 0)}' |
  tee "$out/bench.txt"
