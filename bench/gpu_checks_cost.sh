#!/usr/bin/env bash
# What the checks against silent wrong results (issue #29: call agreement,
# departures, fail-stop) cost on one GPU: this tree against BASE_SRC (the
# source of an earlier commit), built side by side and measured in
# alternating rounds in one call. Two ranks on GPU 0 as two domains:
#   - stream-driven, the ranks as threads of one process, every size on
#     the low-latency kernel (hetero_stream_check --threads): the 8 KB
#     all-reduce's time per operation, eager and replayed from a graph;
#   - two processes over shm (the stream-driven pipelined path) and two
#     pretend hosts over tcp (the staged GPU engine): all-reduce busbw
#     from 1 MB to 64 MB (bench/compare_builds.py, each build's own
#     hetccl-perf).
#   With SMALL_PATHS, the same paths' time per all-reduce from 8 B to
#   32 KB as well (nccl-tests' time column, 200 iterations per size).
# Usage: BASE_SRC=DIR [ROUNDS=3] [PATHS="shm tcp"] [SMALL_PATHS="shm tcp"]
#        [LOW_LATENCY=0] bash bench/gpu_checks_cost.sh OUTDIR
#   PATHS: which busbw comparisons to run (default both; empty: none).
#   LOW_LATENCY=0 skips the hetero_stream_check rounds.
#   BASE_BUILD / AFTER_BUILD: builds made already (with the CUDA module and
#   hetero_stream_check), used instead of building BASE_SRC and this tree.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: BASE_SRC=DIR bash bench/gpu_checks_cost.sh OUTDIR}
rounds=${ROUNDS:-3}
mkdir -p "$out"
py=python3
[[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32

build() {  # SOURCE BUILD_DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHETCCL_BUILD_TESTS=OFF -DHETCCL_BUILD_BENCH=OFF \
    -DHETCCL_CUDA_MODULE=ON -DHETCCL_UCX_MODULE=OFF &&
    cmake --build "$2" -j 8 &&
    cmake --build "$2" -j 8 --target hetero_stream_check
}
base=${BASE_BUILD:-$out/base}
after=${AFTER_BUILD:-$out/after}
[[ -n ${BASE_BUILD:-} ]] || build "$BASE_SRC" "$base" >"$out/build-base.log" 2>&1 &
[[ -n ${AFTER_BUILD:-} ]] || build "$repo" "$after" >"$out/build-after.log" 2>&1
wait

check() {  # BUILD_DIR: the 8 KB all-reduce line of the low-latency kernel
  local exe
  exe=$(find "$1" -name hetero_stream_check -type f -perm -u+x | head -1)
  HETCCL_TRANSPORT=shm HETCCL_GPU_LL_MAX=1M \
    HETCCL_COMM_ID=127.0.0.1:$((29800 + RANDOM % 100)) \
    timeout 120 "$exe" "$1/src/libhetccl-cuda.so" --threads 2>&1 |
    grep 'rank 0: all-reduce of 8192 bytes' | head -1
}
if [[ ${LOW_LATENCY:-1} != 0 ]]; then
  for ((i = 1; i <= rounds; i++)); do
    echo "round $i base:  $(check "$base")"
    echo "round $i after: $(check "$after")"
  done | tee "$out/low-latency.txt"
fi

real_nccl=$(cd "$repo/bench" && "$py" -c \
  'import gpu_sweep as g; print(g.find_nvidia_nccl(None))' 2>/dev/null)
compare() {  # NAME LABEL ENV...: one busbw comparison of the two builds
  local name=$1 label=$2
  shift 2
  local sizes=(-b 1M -e 64M -f 4 -w 3 -n 10)
  [[ $name == small-* ]] && sizes=(-b 8 -e 32K -f 8 -w 20 -n 200)
  local envs=()
  for e in "$@"; do envs+=(--env "$e"); done
  "$py" "$repo/bench/compare_builds.py" --before "$base" --after "$after" \
    --own-tools --rounds "$rounds" --out "$out/gpu-$name-compare.md" \
    --label "$label" "${envs[@]}" --env "HETCCL_NCCL_LIBRARY=$real_nccl" \
    -- -np 2 -D split:2 -x allreduce -d float32 "${sizes[@]}" \
    >"$out/compare-$name.log" 2>&1
  tail -25 "$out/gpu-$name-compare.md"
}
for path in ${PATHS-shm tcp} ${SMALL_PATHS:+$(printf 'small-%s ' $SMALL_PATHS)}; do
  case ${path#small-} in
    shm) compare "$path" "2 GPU ranks on one H200 as 2 domains over shm (stream-driven)" \
      HETCCL_TRANSPORT=shm ;;
    tcp) compare "$path" "2 GPU ranks on one H200, 2 pretend hosts over tcp" \
      HETCCL_HOSTID=A,B HETCCL_TRANSPORT=auto ;;
  esac
done
