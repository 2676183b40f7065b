#!/usr/bin/env bash
# The step functions are called by name, through run_step.
# shellcheck disable=SC2317
#
# The GPU checks in one command, for a machine with NVIDIA GPUs and
# PyTorch. In order, each step timed and recorded (a failed step does not
# stop the next ones; the device time is precious, so one run gives all the
# information). Most steps want 2 GPUs; on a machine with 1 GPU the steps
# marked [2 GPUs] are skipped ("needs 2 GPUs": NVIDIA's NCCL refuses two
# ranks on one GPU, and the benchmarks compare against 2-GPU records), and
# the others run HetCCL's 2 ranks both on GPU 0 (rank r on GPU r % count,
# as hetccl-perf and the checks place them):
#   build       HetCCL with the CUDA module (-DHETCCL_CUDA_MODULE=ON), and
#               the GPU checks device_module_check and hetero_stream_check
#               when those targets exist
#   info        hetccl-info
#   module      device_module_check on libhetccl-cuda.so, if it was built
#   streams     hetero_stream_check on libhetccl-cuda.so, if it was built
#               (2 processes, then 2 threads of one process):
#               over shm (with CUDA graph capture and 100 replays, timed
#               against eager launches) and over tcp (every launch staged,
#               captured and replayed the same way)
#   one-process tests/gpu/single_process_check.cc: one process driving the GPUs
#               from one thread (ncclCommInitAll or grouped ncclCommInitRank,
#               grouped collectives) and with a thread per device, every
#               collective and a send/recv ring checked and the current
#               device after every call;
#               NVIDIA's NCCL, the pass-through and 2 domains [2 GPUs], or
#               with 1 GPU only 2 domains on GPU 0
#   graphs      PyTorch: a step with collectives captured in a CUDA graph,
#               replayed 100 times with new inputs and compared bit for bit
#               with the eager step (2 ranks in 2 domains over shm, and over
#               tcp, where the staging proxy's part starts at each replay),
#               then over tcp with CUDA_DEVICE_MAX_CONNECTIONS=1: where the
#               two processes share one GPU, replays over tcp with several
#               hardware queues ran 0.16-0.18x eager and with one queue
#               1.06-1.07x (bench/results/graph-replays-two-processes-2026-12-06.md)
#   faults      tests/gpu/gpu_faults.py: 2 GPU ranks in 2 domains over shm
#               and over tcp (pretend hosts A,B) in a loop of checked
#               all-reduces; rank 1 killed (SIGKILL) or stopped (SIGSTOP,
#               HETCCL_TIMEOUT=5), or rank 0 aborting its process group;
#               drivers hetccl-perf, PyTorch started by hand and torchrun:
#               how long the survivor takes to exit, in
#               gpu-faults-<date>.md; PASS when every scenario run exits
#               within its bound
#   mismatch    tests/gpu/torch_call_mismatch.py: unchanged PyTorch, 2 GPU
#               ranks in 2 domains over shm and as pretend hosts over tcp,
#               whose calls disagree (another count; a broadcast where each
#               names the other as the root): PASS when no rank reads a
#               result, both end with an error that names both calls
#   stalls      stall reports (HETCCL_STALL_WARN=1): 2 GPU ranks in 2 domains
#               (split:2) over shm on the stream-driven path, then as
#               pretend hosts A,B over tcp (the staged engine's proxy), in a
#               loop of checked all-reduces (tests/gpu/torch_fault_allreduce.py
#               --agreed-stop, started by hand); rank 1 stopped (SIGSTOP)
#               for 4 s, then continued: PASS when rank 0's HETCCL_DEBUG_FILE
#               has the stall line (shm: "on the stream-driven path ... has
#               waited"; tcp: "has waited ... for rank 1 (domain ..." with
#               "the staged GPU engine's stage:") and both ranks end the
#               loop with every result right (NO_FAULT ... wrong=0, exit 0)
#   soak        tests/gpu/torch_soak.py under torchrun, HetCCL preloaded, 2 ranks
#               in 2 domains: random collectives and send/receive rings on
#               GPU buffers for SOAK_SECONDS (default 300), every result
#               checked; descriptors, threads, /dev/shm segments and RSS
#               must not grow
#   sanitizer   compute-sanitizer's memcheck, racecheck and synccheck on
#               device_module_check (its largest count DEVICE_CHECK_LARGE_COUNT,
#               default 65539 here), hetero_stream_check and a small checked
#               2-domain hetccl-perf run over shm (every collective, float32
#               and bfloat16, 7 B to 1.75 MB; each rank under the sanitizer),
#               then, time permitting, memcheck on the same run over tcp as 2
#               pretend hosts: the ERROR SUMMARY of each, in
#               sanitizer-summary.txt; PASS when every run ends with
#               summaries whose errors are all known ones (NVIDIA NCCL's
#               probe of its own kernels in ncclCommInitRank, see
#               sanitizer_findings)
#   doctor      hetccl-doctor on GPU ranks: 1 rank in pass-through, and 2
#               ranks on the GPU as 2 pretend hosts over tcp: ready, every
#               collective checked, the link probed
#   run-ddp     tests/gpu/torch_gpt_training.py --mode ddp, unchanged,
#               started by hetccl-run --domains split:2 under torchrun: 2
#               ranks on the one GPU as 2 domains; the ranks must agree bit
#               for bit
#   collectives [2 GPUs] every PyTorch collective with NVIDIA's NCCL and with HetCCL
#               preloaded as libnccl.so.2: result digests equal bit for bit
#   ddp         [2 GPUs] a deterministic DDP training run both ways: losses and final
#               parameters equal bit for bit
#   matrix-shm, matrix-tcp
#               2 GPU ranks as 2 domains (-D split:2), every collective, type and
#               op, odd sizes, results checked (hetccl-perf --check 1)
#   hosts2      2 GPU ranks as 2 pretend hosts (HETCCL_HOSTID=A,B, -D split:2,
#               HETCCL_TRANSPORT=auto): the matrix-* checks, and the INFO
#               log showing 2 GPU ranks in 2 domains whose links are tcp
#   ucx         2 GPU ranks as 2 pretend hosts over the ucx transport
#               (HETCCL_TRANSPORT=ucx, UCX_TLS=tcp): every collective, type
#               and op checked, then all-reduce and send/recv busbw at 64 and
#               256 MB over ucx and over tcp in the same step. Needs the
#               UCX module: a UCX that pkg-config finds at build time, or
#               DEBIAN_UCX (a folder of Debian's libucx0, libucx-dev and their
#               dependencies' .deb files, unpacked here with dpkg -x)
#   ucx-gpu     the ucx step's ranks with a UCX built with CUDA (CUDA_UCX:
#               a folder with its lib/ and bin/, put ahead of any other UCX
#               at run time; scripts/build-ucx-cuda.sh makes one), over
#               UCX_TLS=tcp,cuda_copy: hetccl-info and ucx_info list CUDA
#               memory; with HETCCL_UCX_GPU=1 (GPU buffers handed to UCX as
#               they are) every collective, type and op checked and float32
#               sums up to 64 MB; one link's bandwidth from GPU and host
#               memory (bench/link_bandwidth.cc, where the build has it:
#               CMAKE_ARGS=-DHETCCL_BUILD_BENCH=ON); ucx_perftest's tag
#               bandwidth from GPU and host memory; all-reduce and send/recv
#               busbw at 64 and 256 MB with GPU buffers direct, staged
#               (HETCCL_UCX_GPU=auto, which must stage without RDMA) and
#               over tcp, in alternating rounds (measurements: a run that
#               runs out of time shows "-"); the same three with the 2
#               ranks as threads of one process (single_process_check
#               --busbw: one CUDA context, no turns on the GPU), checked
#   net-gpu     2 GPU ranks as 2 pretend hosts over the net transport with
#               the stand-in NCCL net plugin (tests/net_plugin/standin_net.cc,
#               compiled here; it moves device memory through a host copy
#               of its own, as a GPUDirect NIC moves it without one): with
#               HETCCL_TEST_NET_PTR_CUDA=1 and HETCCL_NET_GPU=1 (GPU buffers
#               registered as NCCL_PTR_CUDA and handed over as they are, each
#               receive flushed) every collective, type and op checked and
#               float32 sums up to 64 MB over 2 rails; with devices of
#               DMA-BUF only (HETCCL_TEST_NET_PTR_DMABUF=1) the buffers go
#               through DMA-BUF descriptors where the GPU exports them
#               (regMrDmaBuf), else are staged, checked either way; with
#               neither the buffers staged (auto), checked; the INFO log
#               must say which
#   hosts4      [2 GPUs] 4 ranks on 2 GPUs (rank r on GPU r % 2, -D 0,0,1,1) as
#               pretend hosts A,A,B,B, then A,B,C,D: every collective, type
#               and op checked up to 1 MB, float32 sums up to 64 MB; the
#               INFO log showing 4 GPU ranks in 2 domains, links tcp, and
#               4 ranks whose domain of 2 runs on NCCL
#   hetero-all  [2 GPUs] busbw of every collective with GPU buffers (all-reduce,
#               all-gather, reduce-scatter, broadcast, all-to-all, reduce,
#               gather, scatter, send/recv), 2 GPUs as 2 domains over shm,
#               direct and staged (HETCCL_GPU_DIRECT=0)
#   overhead    [2 GPUs] bench/passthrough_overhead.cc: the time the pass-through
#               adds per launch, both sides in the same processes, 8 B to
#               4 MB, against the sweep's targets
#   sweep       [2 GPUs] bench/gpu_sweep.py: NVIDIA NCCL vs HetCCL pass-through
#   hetero      [2 GPUs] bench/gpu_hetero_allreduce.py: 2-domain all-reduce vs NCCL
#               (host path, NVLink), Gloo and pinned copies
#   compare     [2 GPUs] bench/compare_builds.py: the 2-domain all-reduce (2 GPUs,
#               shm, 64 MB to 1 GB) of an earlier commit's build against
#               this one, alternating rounds (BASE_SRC: that commit's
#               source tree; the build step builds it in build-base beside
#               its own build)
#   net-bench   [2 GPUs] bench/gpu_network_compare.py: 2 pretend hosts, HetCCL's tcp
#               vs NCCL's sockets (default and HetCCL-like settings), 5
#               collectives at 64M and 256M; 4 ranks 2 per GPU; NCCL NVLink
#   queue-depth bench/gpu_queue_depth.cu (nvcc): how many operations of
#               each kind a stream holds before an enqueue waits, on 1 and
#               3 streams, in queue-depth.md
#   enqueue-hold where a GPU rank's 256 MB launch holds its calling thread:
#               send/recv and all-gather between pretend hosts over 1 to 10
#               launches in a row, 16M and 64M chunks, up to 4 pieces per
#               staging copy, 2 and 4 pairs of staging streams, then the
#               launching threads' stacks sampled with gdb, in
#               enqueue-hold.md
#   cross-host  bench/cross_host.py: 2 ranks as pretend hosts over tcp, CPU
#               ranks and GPU ranks on one GPU (as 2 processes and as 2
#               threads of one process), every collective's busbw at
#               64 and 256 MB as a fraction of link-bandwidth --two-way in
#               the same run (3 alternating rounds; CROSS_HOST_ARGS adds
#               options, e.g. --variant NAME:VAR=VALUE); #36's target 0.9
#   train       [2 GPUs] tests/gpu/torch_gpt_training.py, a small GPT, fsdp2 and ddp:
#               NCCL over NVLink and over sockets, HetCCL with 2 pretend
#               hosts and with 4 ranks (A,A,B,B; A,B,C,D): every run DONE
#               with ranks agreeing; tokens/s and loss curves against NCCL
#               over NVLink, in train-gpt-<date>.md
# then prints a summary table (result, seconds, key numbers) and exits 1 if
# any step failed. Logs and reports go to $OUT (default /tmp/hetccl-gpu);
# the bench reports (no charts: bench/charts.py draws those on demand) are
# also copied to bench/results/.
#
# Environment: PYTHON (default: python3 or /opt/torch/.venv/bin/python3,
# whichever imports torch), BUILD_DIR (default build-gpu), STEPS (a
# space-separated subset of the step names above; default all), DEADLINE
# (seconds after which the remaining steps are skipped so that the summary
# still prints; default 570), CMAKE_ARGS (extra configure arguments),
# SWEEP_ARGS / HETERO_ARGS / NET_ARGS (extra arguments of the bench
# scripts), TRAIN_STEPS (steps of each training run, default 30), BASE_SRC
# (the source tree the compare step measures against; unset: no compare),
# COMPARE_ROUNDS (its alternating rounds per build, default 3),
# RESULTS_DIR (where the bench reports are copied; default bench/results,
# empty: nowhere), SANITIZER_TOOLS (default "memcheck racecheck synccheck")
# and SANITIZER_CHECKS (default "module streams perf-shm") of the sanitizer
# step, DEVICE_CHECK_LARGE_COUNT (its device_module_check's largest count),
# FAULTS_ONLY (comma-separated scenarios of the faults step, in the order
# to run them; default all), FAULTS_LIMIT (its seconds, default 200),
# SOURCE_DESC (what tree was built, for the faults record; default git's
# view), SOAK_SECONDS (the soak step's budget, default 300). Without nvidia-smi (no NVIDIA GPU) it says so and exits 0.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/hetccl-gpu}
mkdir -p "$out"
build=${BUILD_DIR:-$repo/build-gpu}
results_dir=${RESULTS_DIR-$repo/bench/results}
steps=" ${STEPS:-build info module streams one-process graphs faults mismatch stalls soak sanitizer collectives ddp matrix-shm matrix-tcp hosts2 ucx ucx-gpu net-gpu doctor run-ddp hosts4 hetero-all overhead sweep hetero compare net-bench queue-depth enqueue-hold cross-host train} "
deadline=${DEADLINE:-570}
today=$(date +%Y-%m-%d)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CUBLAS_WORKSPACE_CONFIG=:4096:8

# ---------------------------------------------------------------------------
# Bookkeeping: every step leaves a result, its seconds and a note.

step_names=() step_results=() step_seconds=() step_notes=()
failed=0

record() {  # NAME RESULT SECONDS NOTE
  step_names+=("$1") step_results+=("$2") step_seconds+=("$3") step_notes+=("$4")
  [[ $2 == FAIL ]] && failed=1
  echo "== $1: $2 ($3 s) $4"
}

remaining() { echo $((deadline - SECONDS)); }

# The steps that need 2 GPUs: skipped where there is only one.
two_gpu_steps=" collectives ddp hosts4 hetero-all overhead sweep hetero compare net-bench train "

# Runs step function step_NAME unless STEPS leaves it out or time is up. The
# function sets `result` (PASS, FAIL or SKIP) and `note`; it may use $limit,
# the seconds it has left.
run_step() {
  local name=$1 want=$2 start=$SECONDS
  if [[ $steps != *" $name "* ]]; then
    record "$name" SKIP 0 "not in STEPS"
    return
  fi
  if ((gpus < 2)) && [[ $two_gpu_steps == *" $name "* ]]; then
    record "$name" SKIP 0 "needs 2 GPUs ($gpus here)"
    return
  fi
  limit=$(remaining)
  if ((limit < 15)); then
    record "$name" SKIP 0 "out of time (DEADLINE=$deadline s)"
    return
  fi
  ((limit > want)) && limit=$want
  echo "== $name (at most $limit s)"
  result=FAIL note=""
  "step_${name//-/_}"
  record "$name" "$result" $((SECONDS - start)) "$note"
}

summary() {
  echo
  echo "== Summary (total $SECONDS s; logs and reports in $out)"
  printf '%-12s %-5s %5s  %s\n' step result s notes
  local i
  for i in "${!step_names[@]}"; do
    printf '%-12s %-5s %5s  %s\n' "${step_names[$i]}" "${step_results[$i]}" \
      "${step_seconds[$i]}" "${step_notes[$i]}"
  done | tee "$out/summary.txt"
}

# ---------------------------------------------------------------------------
# The machine: NVIDIA GPUs, a Python with PyTorch, NVIDIA's NCCL.

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: tests/gpu/run.sh needs NVIDIA GPUs (no nvidia-smi here)"
  exit 0
fi
py=""
for candidate in ${PYTHON:-} python3 /opt/torch/.venv/bin/python3; do
  if "$candidate" -c 'import torch' >/dev/null 2>&1; then
    py=$candidate
    break
  fi
done
if [[ -z $py ]]; then
  echo "FAIL: no Python with PyTorch (tried ${PYTHON:+$PYTHON }python3" \
    "/opt/torch/.venv/bin/python3); set PYTHON"
  exit 1
fi
gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>&1 | tail -1)
if ! [[ $gpus =~ ^[0-9]+$ ]] || ((gpus < 1)); then
  echo "FAIL: $py sees '$gpus' CUDA GPUs; these checks need at least 1"
  nvidia-smi -L
  exit 1
fi
if ((gpus < 2)); then
  echo "NOTE: 1 GPU: the steps that need 2 GPUs are skipped ($two_gpu_steps);" \
    "HetCCL's 2-rank checks run both ranks on GPU 0"
fi
helpers=(env PYTHONPATH="$repo/bench" "$py" -c)
if ! real_nccl=$("${helpers[@]}" 'import gpu_sweep as g; print(g.find_nvidia_nccl(None))'); then
  echo "FAIL: NVIDIA's libnccl.so.2 not found (set HETCCL_NCCL_LIBRARY)"
  exit 1
fi
cudart_dirs=$("${helpers[@]}" 'import gpu_sweep as g; print(":".join(g.cuda_runtime_dirs()))')
# hetccl-perf and hetccl-info dlopen libcudart: the wheels' own copy.
export LD_LIBRARY_PATH="$cudart_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "python $py ($("$py" -c 'import torch; print(torch.__version__)')), $gpus GPUs"
echo "NVIDIA NCCL $real_nccl; CUDA runtime from ${cudart_dirs:-the loader path}"
nvidia-smi -L

perf=$build/tools/hetccl-perf
preload=(env LD_PRELOAD="$build/src/libnccl.so.2" HETCCL_NCCL_LIBRARY="$real_nccl")
torchrun=("$py" -m torch.distributed.run --standalone --nproc_per_node 2)

# ---------------------------------------------------------------------------
# The steps.

base_build=${BASE_BUILD_DIR:-$repo/build-base}
base_pid=""

# The earlier commit's build for the compare step, in the background while
# the build step builds this one.
start_base_build() {
  [[ -n ${BASE_SRC:-} && $steps == *" compare "* ]] && ((gpus >= 2)) || return
  (cmake -S "$BASE_SRC" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHETCCL_BUILD_TESTS=OFF -DHETCCL_BUILD_BENCH=OFF -DHETCCL_CUDA_MODULE=ON &&
    cmake --build "$base_build" -j "$(nproc)") >"$out/build-base.log" 2>&1 &
  base_pid=$!
}

# DEBIAN_UCX: Debian's UCX packages, unpacked into $out/ucx-root, found by
# pkg-config at configure time and by the loader at run time.
use_ucx_debs() {
  [[ -n ${DEBIAN_UCX:-} ]] || return 0
  local root=$out/ucx-root deb
  mkdir -p "$root"
  for deb in "$DEBIAN_UCX"/*.deb; do dpkg -x "$deb" "$root" || return 1; done
  local libdir=$root/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "UCX from $DEBIAN_UCX unpacked in $root"
}

step_build() {
  use_ucx_debs || echo "DEBIAN_UCX: cannot unpack $DEBIAN_UCX"
  start_base_build
  local extra=()
  read -ra extra <<<"${CMAKE_ARGS:-}"
  local configure=(cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    -DHETCCL_BUILD_TESTS=OFF -DHETCCL_BUILD_BENCH=OFF "${extra[@]}")
  local module=ON
  if ! timeout "$limit" "${configure[@]}" -DHETCCL_CUDA_MODULE=ON >"$out/cmake.log" 2>&1 ||
    ! timeout "$limit" cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1; then
    # Without the CUDA module the rest can still run: build that, and fail
    # the step.
    module=OFF
    tail -20 "$out/cmake.log" "$out/build.log" 2>/dev/null
    timeout "$limit" "${configure[@]}" -DHETCCL_CUDA_MODULE=OFF >"$out/cmake-nomodule.log" 2>&1 &&
      timeout "$limit" cmake --build "$build" -j "$(nproc)" >"$out/build-nomodule.log" 2>&1
  fi
  local target
  for target in device_module_check hetero_stream_check single_process_check \
    passthrough_overhead; do
    timeout "$limit" cmake --build "$build" -j "$(nproc)" --target "$target" \
      >"$out/build-$target.log" 2>&1 || true
  done
  local missing=() file
  for file in tools/hetccl-perf tools/hetccl-info src/libnccl.so.2 src/libhetccl-cuda.so; do
    [[ -e $build/$file ]] || missing+=("${file##*/}")
  done
  [[ -n $(built_check device_module_check) ]] || missing+=(device_module_check)
  [[ -n $(built_check hetero_stream_check) ]] || missing+=(hetero_stream_check)
  note="CUDA module $module; missing: ${missing[*]:-none}"
  if [[ $module == ON && -x $perf && -e $build/src/libnccl.so.2 ]]; then
    result=PASS
  fi
}

step_info() {
  HETCCL_NCCL_LIBRARY="$real_nccl" timeout "$limit" "$build/tools/hetccl-info" \
    >"$out/hetccl-info.log" 2>&1
  local code=$?
  cat "$out/hetccl-info.log"
  ((code == 0)) && result=PASS
  note="exit $code"
}

# built_check NAME: where the build put the GPU check NAME (none: not built).
built_check() {
  local place
  for place in "$build/tests/gpu/$1" "$build/$1"; do
    [[ -x $place ]] && echo "$place" && return
  done
}

# module_step NAME: runs the GPU check NAME on libhetccl-cuda.so.
module_step() {
  local check
  check=$(built_check "$1")
  if [[ -z $check ]]; then
    result=SKIP note="$1 not built"
    return
  fi
  timeout "$limit" "$check" "$build/src/libhetccl-cuda.so" >"$out/$1.log" 2>&1
  local code=$?
  tail -15 "$out/$1.log"
  ((code == 0)) && result=PASS
  note="exit $code; $(tail -1 "$out/$1.log" | cut -c1-80)"
}
step_module() { module_step device_module_check; }
# hetero_stream_check over shm (the stream-driven path) and over tcp
# (everything staged), graph captures and replays in both; then both again
# with the ranks as two threads of one process (one CUDA context: on one
# GPU their work runs side by side, not in turns). Over shm with threads
# the all-reduce is timed from 8 B to 1 MiB with the low-latency kernel
# (HETCCL_GPU_LL_MAX=1M) and without it (0). Two ranks in one process on
# one GPU need more hardware queues than CUDA's default 8: with more
# streams than queues, streams share one, and a rank's stream waiting for
# the other rank can hold up that rank's work queued behind it.
# (Two processes never share queues; they take turns on the GPU.) Over tcp
# once more with CUDA_DEVICE_MAX_CONNECTIONS=1, which Megatron-LM sets:
# every stream of a rank in one queue, so that a wait for the peer
# enqueued before the work the peer needs from this rank would stop both.
step_streams() {
  module_step hetero_stream_check
  [[ $result == PASS ]] || return
  local check run transport code failed=0 port=29733 mode ll queues
  check=$(built_check hetero_stream_check)
  # tcp-one-queue: every stream of a rank in one hardware queue, as
  # Megatron-LM's CUDA_DEVICE_MAX_CONNECTIONS=1 puts them.
  for run in tcp tcp-one-queue threads-shm-ll threads-shm-pipelined threads-tcp; do
    transport=shm mode=() ll=64K queues=32
    [[ $run == *tcp* ]] && transport=tcp
    [[ $run == threads-* ]] && mode=(--threads)
    [[ $run == *-ll ]] && ll=1M
    [[ $run == *-pipelined ]] && ll=0
    [[ $run == *-one-queue ]] && queues=1
    CUDA_DEVICE_MAX_CONNECTIONS=$queues \
      HETCCL_TRANSPORT=$transport HETCCL_COMM_ID=127.0.0.1:$((port++)) \
      HETCCL_GPU_LL_MAX=$ll HETERO_STREAM_SWEEP=$([[ $run == threads-shm-* ]] && echo 1) \
      timeout $((limit / 5)) "$check" "$build/src/libhetccl-cuda.so" "${mode[@]}" \
      >"$out/hetero_stream_check-$run.log" 2>&1
    code=$?
    ((code == 0)) || failed=1
    tail -4 "$out/hetero_stream_check-$run.log"
    note+="; $run: exit $code"
  done
  ((failed == 0)) || result=FAIL
  note+="; $(grep -h 'rank 0: all-reduce of 8192 bytes: eager' "$out"/hetero_stream_check*.log | cut -c9-200 | tr '\n' ' ')"
}

# One process driving several GPUs (tests/gpu/single_process_check.cc), from
# one thread (ncclCommInitAll, or grouped ncclCommInitRank: the only
# one-thread init that takes a device twice; grouped collectives) and from
# a thread per device: NVIDIA's NCCL (preloaded), HetCCL passing through to it, and
# HetCCL with the ranks in 2 domains. With 1 GPU only the last runs, both
# ranks on GPU 0 (NVIDIA's NCCL refuses two ranks on one GPU).
step_one_process() {
  local check config label env_words args code failed=0 ran=()
  check=$(built_check single_process_check)
  if [[ -z $check ]]; then
    result=SKIP note="single_process_check not built"
    return
  fi
  local configs=()
  if ((gpus >= 2)); then
    configs+=("native|LD_PRELOAD=$real_nccl|" "native-threads|LD_PRELOAD=$real_nccl|--threads"
      "passthrough|HETCCL_NCCL_LIBRARY=$real_nccl|" "passthrough-threads|HETCCL_NCCL_LIBRARY=$real_nccl|--threads"
      "split2|HETCCL_NCCL_LIBRARY=$real_nccl HETCCL_DOMAINS=split:2|--devices 0,1"
      "split2-threads|HETCCL_NCCL_LIBRARY=$real_nccl HETCCL_DOMAINS=split:2|--threads --devices 0,1"
      "split2-grouped-init|HETCCL_NCCL_LIBRARY=$real_nccl HETCCL_DOMAINS=split:2|--grouped-init --devices 0,1")
  else
    # Both ranks on GPU 0 in one process: see step_streams for the queues.
    configs+=("split2-1gpu|HETCCL_NCCL_LIBRARY=$real_nccl HETCCL_DOMAINS=split:2 CUDA_DEVICE_MAX_CONNECTIONS=32|--grouped-init --devices 0,0"
      "split2-1gpu-threads|HETCCL_NCCL_LIBRARY=$real_nccl HETCCL_DOMAINS=split:2 CUDA_DEVICE_MAX_CONNECTIONS=32|--threads --devices 0,0")
  fi
  for config in "${configs[@]}"; do
    IFS='|' read -r label env_words args <<<"$config"
    # shellcheck disable=SC2086 # the words are VAR=value pairs and options
    env $env_words timeout $((limit / ${#configs[@]})) "$check" $args \
      >"$out/one-process-$label.log" 2>&1
    code=$?
    ((code == 0)) || failed=1
    ran+=("$label $( ((code == 0)) && echo PASS || echo "FAIL($code)")")
    grep -h '^FAIL' "$out/one-process-$label.log" | head -5
  done
  ((failed == 0)) && result=PASS
  note="${ran[*]}$( ((gpus < 2)) && echo '; native and pass-through need 2 GPUs')"
}

# PyTorch (HetCCL preloaded, 2 ranks in 2 domains, 1 GPU is enough): a step
# with collectives captured in a CUDA graph and replayed 100 times against
# the eager step, over shm (stream-driven) and over tcp (staged).
step_graphs() {
  local script=$repo/tests/gpu/torch_graph_collectives.py code_shm code_tcp code_queue
  local logs=("$out/graphs-shm.log" "$out/graphs-tcp.log" "$out/graphs-tcp-one-queue.log")
  HETCCL_DOMAINS=split:2 timeout $((limit / 3)) "${preload[@]}" "${torchrun[@]}" \
    "$script" >"${logs[0]}" 2>&1
  code_shm=$?
  HETCCL_DOMAINS=split:2 HETCCL_TRANSPORT=tcp timeout $((limit / 3)) "${preload[@]}" \
    "${torchrun[@]}" "$script" >"${logs[1]}" 2>&1
  code_tcp=$?
  CUDA_DEVICE_MAX_CONNECTIONS=1 HETCCL_DOMAINS=split:2 HETCCL_TRANSPORT=tcp \
    timeout $((limit / 3)) "${preload[@]}" "${torchrun[@]}" "$script" >"${logs[2]}" 2>&1
  code_queue=$?
  grep -h '^PASS\|^FAIL\|^TIMING\|Error' "${logs[@]}" | head -30
  ((code_shm == 0 && code_tcp == 0 && code_queue == 0)) && result=PASS
  note="exit shm $code_shm, tcp $code_tcp, tcp one queue $code_queue; $(grep -h '^TIMING rank 0' "${logs[@]}" | cut -c1-100 | tr '\n' ' ')"
}

# compute-sanitizer: on PATH, else the CUDA toolkit's.
find_sanitizer() {
  local candidate
  for candidate in "$(command -v compute-sanitizer 2>/dev/null)" \
    /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer; do
    if [[ -n $candidate && -x $candidate ]]; then
      echo "$candidate"
      return
    fi
  done
}

# sanitizer_findings LOG...: "N errors in K summaries (M known); first:
# TEXT" from compute-sanitizer's output (its lines start "========= "; each
# process it watched ends with an ERROR SUMMARY line; racecheck's RACECHECK
# SUMMARY "(N errors, M warnings)" counts where there is no ERROR SUMMARY).
# Known: errors whose host backtrace passes through NVIDIA NCCL's
# ncclInitKernelsForDevice, its own probe of the kernels it ships
# (cudaFuncGetAttributes then cudaGetLastError answer "no kernel image" for
# those built for other GPUs, and NCCL goes on); TEXT is the first other
# error and the 3 lines after it.
sanitizer_findings() {
  awk '
    function close_block() {
      if (inblock && !probe && first == "") first = text
      if (inblock && probe) known++
      inblock = 0
    }
    /^========= ERROR SUMMARY: [0-9]+ error/ { close_block(); summaries++; errors += $4; next }
    /^========= RACECHECK SUMMARY:/ {
      close_block()
      races++
      if (match($0, /\([0-9]+ error/)) raceErrors += substr($0, RSTART + 1, RLENGTH - 7) + 0
      next
    }
    /^========= (COMPUTE-SANITIZER|LEAK SUMMARY|Target application returned|This tool|Warning|Note)/ { close_block(); next }
    /^========= [^ ]/ { close_block(); inblock = 1; probe = 0; text = substr($0, 11); grab = 3; next }
    inblock && /^=========  / {
      if ($0 ~ /ncclInitKernelsForDevice/) probe = 1
      if (grab > 0) { line = $0; sub(/^=========  */, "", line); text = text " / " line; grab-- }
      next
    }
    { close_block() }
    END {
      close_block()
      if (summaries == 0) { summaries = races; errors = raceErrors }
      printf "%d errors in %d summaries (%d known); first: %s\n", errors, summaries, known,
        (first == "" ? "-" : substr(first, 1, 300))
    }
  ' "$@"
}

# sanitize TOOL CHECK SECONDS COMMAND...: one run under compute-sanitizer
# --tool TOOL; appends its line to sanitizer-summary.txt and counts it in
# san_bad when it found errors or ended without a summary.
sanitize() {
  local tool=$1 check=$2 seconds=$3
  shift 3
  local log=$out/sanitizer-$tool-$check.log
  timeout -k 5 "$seconds" "$sanitizer" --tool "$tool" --target-processes all \
    --print-limit 20 "$@" >"$log" 2>&1
  sanitizer_record "$tool" "$check" $? "$log"
}

# sanitizer_record TOOL CHECK CODE LOG...
sanitizer_record() {
  local tool=$1 check=$2 code=$3
  shift 3
  local findings line
  findings=$(sanitizer_findings "$@")
  grep -h 'SUMMARY:' "$@" | sed "s/^/    $tool $check: /" >>"$out/sanitizer-summary.txt"
  line="$tool $check: exit $code$( ((code == 124 || code == 137)) && echo ' (timed out)'); $findings"
  echo "SANITIZER $line" | tee -a "$out/sanitizer-summary.txt"
  # Clean: at least one summary, and every error a known one.
  local errors summaries known
  read -r errors _ _ summaries _ known _ <<<"${findings//(/}"
  if ((summaries == 0 || errors > known)); then
    san_bad+=("$tool $check: ${findings%%;*}")
  fi
  san_runs=$((san_runs + 1))
}

# sanitize_perf TOOL CHECK SECONDS [VAR=VALUE ...] -- ARGS...: 2 hetccl-perf
# ranks started by hand (the variables torchrun sets and HETCCL_COMM_ID),
# each under compute-sanitizer, forced into 2 domains, checked.
san_port=29840
sanitize_perf() {
  local tool=$1 check=$2 seconds=$3 vars=() rank pids=() code worst=0 logs=()
  shift 3
  while (($#)) && [[ $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  (($#)) && shift
  san_port=$((san_port + 1))
  for rank in 0 1; do
    logs+=("$out/sanitizer-$tool-$check-rank$rank.log")
    env "${vars[@]}" RANK="$rank" WORLD_SIZE=2 LOCAL_RANK="$rank" \
      HETCCL_COMM_ID="127.0.0.1:$san_port" HETCCL_NCCL_LIBRARY="$real_nccl" \
      timeout -k 5 "$seconds" "$sanitizer" --tool "$tool" --print-limit 20 \
      "$perf" -D split:2 --check 1 -w 0 -n 1 --timeout $((seconds - 8)) "$@" \
      >"${logs[-1]}" 2>&1 &
    pids+=($!)
  done
  for rank in 0 1; do
    wait "${pids[$rank]}"
    code=$?
    ((code != 0 && worst == 0)) && worst=$code
  done
  grep -h 'Out of bounds values' "${logs[@]}" | head -1
  sanitizer_record "$tool" "$check" "$worst" "${logs[@]}"
}

# compute-sanitizer's memcheck, racecheck and synccheck on the GPU checks
# and a small 2-domain hetccl-perf run; each run at most a share of the
# step's time. PASS: every run ended with summary lines, and every error
# counted there was a known one (sanitizer_findings).
step_sanitizer() {
  step_start=$SECONDS
  sanitizer=$(find_sanitizer)
  if [[ -z $sanitizer ]]; then
    result=SKIP note="compute-sanitizer not found (PATH, /usr/local/cuda*/bin)"
    return
  fi
  echo "compute-sanitizer: $sanitizer ($("$sanitizer" --version 2>&1 | grep -i version | head -1))"
  : >"$out/sanitizer-summary.txt"
  san_bad=() san_runs=0
  local module_check stream_check tool each left each_limit runs=10 port=29800
  module_check=$(built_check device_module_check)
  stream_check=$(built_check hetero_stream_check)
  # Every collective, float32 and bfloat16, 7 B to 1.75 MB, both placements.
  local small=(-x all -d "float32,bfloat16" -o sum -b 7 -e 2M -f 64)
  local tools checks
  read -ra tools <<<"${SANITIZER_TOOLS:-memcheck racecheck synccheck}"
  read -ra checks <<<"${SANITIZER_CHECKS:-module streams perf-shm}"
  runs=$((${#tools[@]} * ${#checks[@]} + 1))
  for tool in "${tools[@]}"; do
    for each in "${checks[@]}"; do
      left=$((limit - (SECONDS - step_start) - 5))
      # A fair share of what is left, but at least 30 s while there is
      # that much (the runs in front go first; the last may not run).
      each_limit=$((left / runs))
      ((each_limit < 30)) && each_limit=$((left < 30 ? left : 30))
      runs=$((runs - 1))
      ((each_limit > 90)) && each_limit=90
      if ((each_limit < 20)); then
        echo "SANITIZER $tool $each: not run (no time left)" | tee -a "$out/sanitizer-summary.txt"
        san_bad+=("$tool $each: not run")
        continue
      fi
      case $each in
        module)
          [[ -n $module_check ]] || { san_bad+=("device_module_check not built"); continue; }
          DEVICE_CHECK_LARGE_COUNT=${DEVICE_CHECK_LARGE_COUNT:-65539} \
            sanitize "$tool" device_module_check "$each_limit" \
            "$module_check" "$build/src/libhetccl-cuda.so"
          ;;
        streams)
          [[ -n $stream_check ]] || { san_bad+=("hetero_stream_check not built"); continue; }
          port=$((port + 1))
          HETCCL_COMM_ID=127.0.0.1:$port sanitize "$tool" hetero_stream_check "$each_limit" \
            "$stream_check" "$build/src/libhetccl-cuda.so"
          ;;
        perf-shm)
          sanitize_perf "$tool" perf-shm "$each_limit" HETCCL_TRANSPORT=shm -- "${small[@]}"
          ;;
        *)
          san_bad+=("unknown check $each")
          ;;
      esac
    done
  done
  # memcheck on the GPU engine too: 2 pretend hosts, tcp.
  left=$((limit - (SECONDS - step_start) - 5))
  if [[ " ${tools[*]} " != *" memcheck "* ]]; then
    :
  elif ((left >= 30)); then
    sanitize_perf memcheck perf-tcp-2hosts $((left > 90 ? 90 : left)) \
      HETCCL_TRANSPORT=auto HETCCL_HOSTID=A,B -- "${small[@]}"
  else
    echo "SANITIZER memcheck perf-tcp-2hosts: not run (no time left)" | tee -a "$out/sanitizer-summary.txt"
  fi
  ((${#san_bad[@]} == 0)) && result=PASS
  note="$san_runs runs; $( ((${#san_bad[@]})) && IFS=";" && echo "not clean: ${san_bad[*]}" || echo "0 errors in each")"
}

# Fault scenarios on GPU ranks: tests/gpu/gpu_faults.py, its record
# gpu-faults-<date>.md.
step_faults() {
  local report=$out/gpu-faults-$today.md
  local shown="STEPS=\"${STEPS:-}\" DEADLINE=$deadline bash tests/gpu/run.sh (step faults)"
  timeout -k 10 "$limit" "$py" "$repo/tests/gpu/gpu_faults.py" --perf "$perf" \
    --hetccl-lib "$build/src/libnccl.so.2" --nccl-library "$real_nccl" --python "$py" \
    --out "$report" --log-dir "$out/faults-logs" --deadline $((limit - 15)) \
    --command "$shown" --source "${SOURCE_DESC:-}" ${FAULTS_ONLY:+--only "$FAULTS_ONLY"} \
    >"$out/faults.log" 2>&1
  local code=$?
  grep '^FAULT \|^Traceback\|Error' "$out/faults.log" | head -30
  [[ -f $report && -n $results_dir ]] && mkdir -p "$results_dir" && cp "$report" "$results_dir/"
  ((code == 0)) && result=PASS
  note="exit $code$( ((code == 124 || code == 137)) && echo ' (timed out)'); $(grep '^KEY ' "$out/faults.log" | cut -c5- | cut -c1-400)"
}

step_mismatch() {
  timeout -k 10 "$limit" "$py" "$repo/tests/gpu/torch_call_mismatch.py" \
    --hetccl-lib "$build/src/libnccl.so.2" --nccl-library "$real_nccl" \
    --log-dir "$out/mismatch-logs" ${MISMATCH_ONLY:+--only "$MISMATCH_ONLY"} \
    >"$out/mismatch.log" 2>&1
  local code=$?
  grep '^MISMATCH \|^Traceback' "$out/mismatch.log" | head -10
  ((code == 0)) && result=PASS
  note="exit $code; $(grep '^MISMATCH ' "$out/mismatch.log" | cut -c1-90 | tr '\n' ' ')"
}

# stalls_pass PATH SECONDS: 2 GPU ranks in 2 domains, over shm (the
# stream-driven path) or, PATH tcp, as pretend hosts A,B over tcp, each a
# process of tests/gpu/torch_fault_allreduce.py started by hand with
# HETCCL_STALL_WARN=1 and its own HETCCL_DEBUG_FILE; 1 s after both are
# READY rank 1 is stopped (SIGSTOP) for 4 s, and the loop (all-reduces,
# each checked, for 9 s on rank 0's clock) goes on. Sets pass_note;
# returns 0 when rank 0's log has the stall line and both ranks end the
# loop with every result right.
stalls_pass() {
  local path=$1 seconds=$2
  local dir=$out/stalls-$path
  rm -rf "$dir"
  mkdir -p "$dir"
  local where=(HETCCL_TRANSPORT=shm)
  [[ $path == tcp ]] && where=(HETCCL_TRANSPORT=auto "HETCCL_HOSTID=A,B")
  local port
  port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local rank pids=()
  for rank in 0 1; do
    timeout -k 5 "$seconds" env -u HETCCL_TIMEOUT -u HETCCL_COMM_ID \
      -u NCCL_COMM_ID -u HETCCL_HOSTID \
      LD_PRELOAD="$build/src/libnccl.so.2" HETCCL_NCCL_LIBRARY="$real_nccl" \
      "${where[@]}" HETCCL_DOMAINS=split:2 HETCCL_STALL_WARN=1 HETCCL_DEBUG=WARN \
      HETCCL_DEBUG_FILE="$dir/rank$rank.hetccl.log" NCCL_NVLS_ENABLE=0 \
      PYTHONUNBUFFERED=1 RANK="$rank" WORLD_SIZE=2 LOCAL_RANK="$rank" \
      MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      "$py" "$repo/tests/gpu/torch_fault_allreduce.py" --mode kill --agreed-stop \
      --seconds 9 --pg-timeout 60 >"$dir/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  # The victim: rank 1's Python process (timeout runs it as its child).
  local victim="" ready=0 waited=0
  while ((waited < seconds - 15)); do
    ready=$(cat "$dir/rank0.log" "$dir/rank1.log" 2>/dev/null | grep -c '^READY rank=')
    ((ready >= 2)) && break
    if ! kill -0 "${pids[0]}" 2>/dev/null || ! kill -0 "${pids[1]}" 2>/dev/null; then
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  victim=$(sed -n 's/^READY rank=1 pid=\([0-9]*\).*/\1/p' "$dir/rank1.log" | head -1)
  if ((ready < 2)) || [[ -z $victim ]]; then
    kill "${pids[@]}" 2>/dev/null
    wait "${pids[@]}"
    pass_note="$path: not both ranks READY within $((seconds - 15)) s (or one exited)"
    tail -n 3 "$dir/rank0.log" "$dir/rank1.log"
    return 1
  fi
  sleep 1
  kill -STOP "$victim"
  sleep 4
  kill -CONT "$victim"
  local codes=() pid
  for pid in "${pids[@]}"; do
    wait "$pid"
    codes+=($?)
  done
  local line
  if [[ $path == tcp ]]; then
    line=$(grep 'has waited' "$dir/rank0.hetccl.log" 2>/dev/null | grep 'for rank 1 (domain' |
      grep "the staged GPU engine's stage:" | head -1)
  else
    line=$(grep 'on the stream-driven path' "$dir/rank0.hetccl.log" 2>/dev/null |
      grep 'has waited' | head -1)
  fi
  local done0 done1 wrong
  done0=$(grep -c '^NO_FAULT rank=0 .* wrong=0$' "$dir/rank0.log")
  done1=$(grep -c '^NO_FAULT rank=1 .* wrong=0$' "$dir/rank1.log")
  wrong=$(cat "$dir/rank0.log" "$dir/rank1.log" | grep -c '^WRONG\|^FAULT_SEEN')
  local seen=NONE
  [[ -n $line ]] && seen=yes
  pass_note="$path: exit ${codes[0]}/${codes[1]}, $(grep -h '^NO_FAULT' "$dir/rank0.log" | cut -c10-60), stall line: $seen"
  echo "STALLS $path rank 0: ${line:-no stall line}"
  grep -h '^NO_FAULT\|^WRONG\|^FAULT_SEEN\|Traceback' "$dir/rank0.log" "$dir/rank1.log" | head -6
  if [[ -n $line ]] && ((codes[0] == 0 && codes[1] == 0 && done0 == 1 && done1 == 1 && wrong == 0)); then
    return 0
  fi
  [[ -n $line ]] || grep -h 'HETCCL WARN' "$dir/rank0.hetccl.log" 2>/dev/null | tail -n 3
  tail -n 3 "$dir/rank0.log" "$dir/rank1.log"
  return 1
}

# Stall reports on GPU ranks: the stream-driven path and the staged proxy.
step_stalls() {
  local start=$SECONDS notes=() ok=1 path left
  for path in shm tcp; do
    left=$((limit - (SECONDS - start) - 5))
    if ((left < 25)); then
      notes+=("$path: skipped (no time left)")
      ok=0
      continue
    fi
    stalls_pass "$path" $((left > 45 ? 45 : left)) || ok=0
    notes+=("$pass_note")
  done
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

step_soak() {
  HETCCL_DOMAINS=split:2 timeout "$limit" "${preload[@]}" "${torchrun[@]}" \
    "$repo/tests/gpu/torch_soak.py" --seconds "${SOAK_SECONDS:-300}" >"$out/soak.log" 2>&1
  local code=$?
  grep -h '^SERIES\|^SOAK\|^PASS\|^FAIL\|^WRONG\|Error' "$out/soak.log" | head -12
  ((code == 0)) && result=PASS
  note="exit $code; $(grep -h '^SOAK rank 0' "$out/soak.log" | cut -c1-160)"
}

# torchrun SCRIPT LOG [preload]: one 2-GPU run, at most half the step's time.
torch_run() {
  local script=$1 log=$2 how=${3:-native}
  local prefix=()
  [[ $how == hetccl ]] && prefix=("${preload[@]}")
  timeout $((limit / 2)) "${prefix[@]}" "${torchrun[@]}" "$script" >"$log" 2>&1
}

# hetccl-doctor on GPU ranks: one rank in pass-through (NVIDIA's NCCL
# under it), then 2 ranks on this GPU as 2 pretend hosts over tcp and over
# ucx.
step_doctor() {
  local doctor=$build/tools/hetccl-doctor ok=1 notes=() log
  [[ -x $doctor ]] || { result=FAIL note="no $doctor"; return; }
  log=$out/doctor-passthrough.log
  HETCCL_NCCL_LIBRARY="$real_nccl" timeout $((limit / 3)) "$doctor" -np 1 \
    --timeout $((limit / 3 - 5)) --json "$out/doctor-passthrough.json" >"$log" 2>&1 || ok=0
  notes+=("pass-through: $(grep -E '^(ready|not ready)' "$log"), $(grep -o 'checks: .*' "$log")")
  log=$out/doctor-hosts.log
  # tcp chosen knowingly: otherwise the library rightly warns that UCX
  # could carry the link (with RDMA, which this machine lacks).
  HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_DOMAINS=split:2 HETCCL_HOSTID=A,B \
    HETCCL_TRANSPORT=tcp timeout $((limit / 2)) "$doctor" -np 2 \
    --timeout $((limit / 2 - 5)) --json "$out/doctor-hosts.json" >"$log" 2>&1 || ok=0
  notes+=("pretend hosts: $(grep -E '^(ready|not ready)' "$log"), $(grep -o 'checks: .*' "$log"); $(grep -E '^  domains 0 and 1' "$log")")
  # The same over UCX: where the GPU buffers go is then UCX's to say.
  log=$out/doctor-hosts-ucx.log
  HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_DOMAINS=split:2 HETCCL_HOSTID=A,B \
    HETCCL_TRANSPORT=ucx timeout $((limit / 3)) "$doctor" -np 2 \
    --timeout $((limit / 3 - 5)) >"$log" 2>&1 || ok=0
  notes+=("pretend hosts over ucx: $(grep -E '^(ready|not ready)' "$log"); $(grep -E '^  domains 0 and 1: ' "$log")")
  ((ok)) || tail -5 "$log"
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

# tests/gpu/torch_gpt_training.py (DDP), unchanged, under hetccl-run: 2
# ranks on this GPU as 2 domains (--domains split:2; NVIDIA's NCCL refuses
# two ranks on one GPU, so nothing compares here but the ranks with each
# other).
step_run_ddp() {
  local run=$build/tools/hetccl-run log=$out/run-ddp.log
  local script=("$repo/tests/gpu/torch_gpt_training.py" --mode ddp --steps 10)
  [[ -x $run ]] || { result=FAIL note="no $run"; return; }
  "$run" --dry-run --domains split:2 -- "${torchrun[@]}" "${script[@]}" \
    >"$out/run-ddp-dry.log" 2>&1
  HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT timeout $((limit - 10)) \
    "$run" --domains split:2 -- "${torchrun[@]}" "${script[@]}" >"$log" 2>&1
  local code=$? communicators agree steps
  communicators=$(grep -c 'domain [01] of 2' "$log")
  agree=$(grep -o '^RANKS_AGREE [a-z]*' "$log")
  steps=$(grep -o '^LOSSES .*' "$log" | cut -c1-60)
  note="exit $code; $(grep -m1 '^# hetccl-run' "$out/run-ddp-dry.log"); ${steps:-no LOSSES}; ${agree:-no RANKS_AGREE}; $communicators rank logs of a 2-domain communicator"
  ((code == 0 && communicators >= 2)) && [[ $agree == "RANKS_AGREE yes" ]] &&
    result=PASS
  ((code == 0)) || tail -5 "$log"
}

step_collectives() {
  torch_run "$repo/tests/gpu/torch_collectives.py" "$out/collectives-native.log"
  local native_code=$?
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,ENV HETCCL_DEBUG=INFO \
    torch_run "$repo/tests/gpu/torch_collectives.py" "$out/collectives-hetccl.log" hetccl
  local hetccl_code=$?
  grep -h "HETCCL\|NCCL WARN" "$out/collectives-hetccl.log" | head -10
  local native hetccl
  native=$(grep '^RESULTS' "$out/collectives-native.log")
  hetccl=$(grep '^RESULTS' "$out/collectives-hetccl.log")
  if [[ -z $native || -z $hetccl ]]; then
    note="no RESULTS line (exit native $native_code, hetccl $hetccl_code)"
    tail -5 "$out/collectives-native.log" "$out/collectives-hetccl.log"
  elif [[ $native == "$hetccl" ]]; then
    note="$(grep -o '@' <<<"$native" | wc -l) digests equal bit for bit"
    if ((native_code == 0 && hetccl_code == 0)); then
      result=PASS
    else
      note+=", but exit native $native_code, hetccl $hetccl_code (124: timed out)"
    fi
  else
    note="MISMATCH"
    echo "native: $native"
    echo "hetccl: $hetccl"
  fi
}

step_ddp() {
  local script=$repo/tests/gpu/torch_ddp_losses.py
  torch_run "$script" "$out/ddp-native.log"
  local native_code=$?
  torch_run "$script" "$out/ddp-hetccl.log" hetccl
  local hetccl_code=$?
  local key native hetccl same=1
  for key in LOSSES PARAMS RANKS_AGREE; do
    native=$(grep "^$key " "$out/ddp-native.log")
    hetccl=$(grep "^$key " "$out/ddp-hetccl.log")
    if [[ -z $native || $native != "$hetccl" ]]; then
      same=0
      echo "native: ${native:-<none>}"
      echo "hetccl: ${hetccl:-<none>}"
    fi
  done
  if ((same)) && grep -q '^RANKS_AGREE yes' "$out/ddp-native.log"; then
    note="losses and parameters equal bit for bit; $(grep '^loss ' "$out/ddp-native.log")"
    if ((native_code == 0 && hetccl_code == 0)); then
      result=PASS
    else
      note+="; but exit native $native_code, hetccl $hetccl_code (124: timed out)"
    fi
  else
    note="differ or missing (exit native $native_code, hetccl $hetccl_code)"
    tail -5 "$out/ddp-native.log" "$out/ddp-hetccl.log"
  fi
}

# rank_devices LOG: the devices of hetccl-perf's "Using devices" lines, in
# rank order ("cuda:0,cuda:0" for 2 ranks on one GPU).
rank_devices() {
  local devices
  devices=$(grep -o 'runtime [a-z]* *device [a-z]*:[0-9]*' "$1" | awk '{print $NF}' | paste -sd, -)
  echo "${devices:-?}"
}

# matrix_pass TRANSPORT NAME SECONDS ARGS...: one checked hetccl-perf run of
# the 2 GPUs as 2 domains. Sets pass_note; returns the exit status.
matrix_pass() {
  local transport=$1 name=$2 seconds=$3
  shift 3
  local log=$out/matrix-$transport-$name.log
  ((seconds > limit - 5)) && seconds=$((limit - 5))
  HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_TRANSPORT=$transport \
    timeout $((seconds + 15)) "$perf" -np 2 -D split:2 --check 1 -w 0 -n 1 \
    --timeout "$seconds" --json "$out/matrix-$transport-$name.jsonl" "$@" >"$log" 2>&1
  local code=$?
  local gpus rows wrong
  gpus=$(grep -c 'runtime cuda.*domain [01] of 2' "$log")
  rows=$(grep -c '' "$out/matrix-$transport-$name.jsonl" 2>/dev/null)
  wrong=$(grep -o 'Out of bounds values : [0-9]*' "$log" | grep -o '[0-9]*$')
  pass_note="$name: exit $code, ${rows:-0} results, ${wrong:-?} wrong, ranks on $(rank_devices "$log")"
  if ((code == 0 && gpus != 2)); then
    pass_note+=", ranks not 2 GPUs in 2 domains"
    code=3
  fi
  ((code != 0)) && tail -4 "$log"
  return "$code"
}

# Every collective, type and op at odd sizes up to 1.75 MB, then float32 and
# bfloat16 sums at odd sizes of 14 and 56 MB (several pipeline chunks).
step_matrix() {
  local transport=$1 notes=() code ok=1
  matrix_pass "$transport" all-types $((limit * 2 / 3)) -x all -d all -o all -b 7 -e 2M -f 8
  code=$?
  notes+=("$pass_note")
  ((code != 0)) && ok=0
  local left=$((limit - (SECONDS - step_start)))
  if ((code == 124 || left < 25)); then
    notes+=("large: skipped (no time left)")
  else
    matrix_pass "$transport" large "$left" \
      -x all -d float32,bfloat16 -o sum -b 14680071 -e 64M -f 4 || ok=0
    notes+=("$pass_note")
  fi
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}
step_matrix_shm() { step_start=$SECONDS; step_matrix shm; }
step_matrix_tcp() { step_start=$SECONDS; step_matrix tcp; }

# tcp_links LOG NRANKS: "tcp only (N ranks)" when LOG has at least NRANKS of
# the INFO lines where a rank of a heterogeneous communicator names its
# links to the other domains ("... links: 0 shm, 1 tcp", whatever the
# sentence before) and each names tcp links and no link of another
# transport; otherwise what it found.
tcp_links() {
  awk -v want="$2" '
    /HETCCL INFO/ && /links: *[0-9]+ [A-Za-z]/ {
      lines++
      text = $0
      sub(/.*links: */, "", text)
      sub(/;.*/, "", text)
      n = split(text, parts, /, */)
      tcp = 0
      other = 0
      for (i = 1; i <= n; i++) {
        split(parts[i], words, " ")
        gsub(/[^A-Za-z0-9_]/, "", words[2])
        if (words[2] == "tcp") tcp += words[1]; else other += words[1]
      }
      if (tcp > 0 && other == 0) good++
      last = text
    }
    END {
      if (lines + 0 >= want && good + 0 == lines + 0)
        printf "tcp only (%d ranks)\n", lines
      else
        printf "NOT tcp only: %d of %d links lines, want %d (last: %s)\n",
          good, lines, want, (last == "" ? "none" : last)
    }' "$1"
}

# runs_on_nccl LOG SIZE: how many processes logged that their domain of SIZE
# ranks runs on NCCL (HetCCL's INFO line "its domain of 2 rank(s) runs on
# NCCL"; the pid is the second field of the line's "host:pid:tid" prefix).
runs_on_nccl() {
  grep -E "its domain of $2 rank(\(s\)|s)? runs on NCCL" "$1" |
    sed -E 's/^[^:]*:([0-9]+):.*/\1/' | sort -u | grep -c ''
}

# hosts_pass NAME SECONDS NRANKS DOMAINS HOSTIDS NCCL_DOMAIN ARGS...: one
# checked hetccl-perf run of NRANKS ranks on the GPUs (rank r on GPU
# r % count) as the pretend hosts HOSTIDS (HETCCL_HOSTID: rank r takes
# entry r), domains forced with -D DOMAINS, logging at INFO. Checks from the
# log that every rank is a GPU rank in 2 domains, that every rank's links
# to the other domain are tcp only and, unless NCCL_DOMAIN is 0, that
# NRANKS ranks logged their domain of NCCL_DOMAIN ranks running on NCCL.
# Sets pass_note; returns the exit status (3: it ran, but not as asked).
hosts_pass() {
  local name=$1 seconds=$2 nranks=$3 domains=$4 hostids=$5 nccl_domain=$6
  shift 6
  local log=$out/$name.log json=$out/$name.jsonl
  HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_HOSTID=$hostids HETCCL_TRANSPORT=auto \
    HETCCL_DEBUG=INFO timeout $((seconds + 15)) "$perf" -np "$nranks" -D "$domains" \
    --check 1 -w 0 -n 1 --timeout "$seconds" --json "$json" "$@" >"$log" 2>&1
  local code=$?
  local gpus rows wrong links on_nccl
  gpus=$(grep -c 'runtime cuda.*domain [01] of 2' "$log")
  rows=$(grep -c '' "$json" 2>/dev/null)
  wrong=$(grep -o 'Out of bounds values : [0-9]*' "$log" | grep -o '[0-9]*$')
  links=$(tcp_links "$log" "$nranks")
  pass_note="$name: exit $code, ${rows:-0} results, ${wrong:-?} wrong, $links, ranks on $(rank_devices "$log")"
  if ((gpus != nranks)); then
    pass_note+=", $gpus of $nranks ranks GPU ranks in 2 domains"
    ((code == 0)) && code=3
  fi
  [[ $links == "tcp only"* ]] || { ((code == 0)) && code=3; }
  if ((nccl_domain > 0)); then
    on_nccl=$(runs_on_nccl "$log" "$nccl_domain")
    pass_note+=", $on_nccl of $nranks ranks' domain of $nccl_domain on NCCL"
    ((on_nccl < nranks && code == 0)) && code=3
  fi
  ((code != 0)) && tail -4 "$log"
  return "$code"
}

# The reduction ops of the checks across pretend hosts but premulsum,
# which hosts2 checks in a pass of its own (a user op per size and type).
plain_ops=sum,prod,max,min,avg

# 2 GPUs as 2 pretend hosts: HetCCL links them with tcp (HETCCL_TRANSPORT
# auto: tcp between hosts). Every collective, type and op at odd sizes up
# to 1.75 MB (premulsum in a pass of its own), then float32
# and bfloat16 sums at odd sizes of 14 and 56 MB.
step_hosts2() {
  local start=$SECONDS notes=() code ok=1 left
  hosts_pass hosts2-all-types $((limit / 2)) 2 split:2 A,B 0 \
    -x all -d all -o "$plain_ops" -b 7 -e 2M -f 8
  code=$?
  notes+=("$pass_note")
  ((code != 0)) && ok=0
  left=$((limit - (SECONDS - start) - 15))
  if ((code == 124 || left < 40)); then
    notes+=("premulsum and large: skipped (no time left)")
  else
    hosts_pass hosts2-premulsum $((left / 2)) 2 split:2 A,B 0 \
      -x allreduce,reducescatter,reduce -d all -o premulsum -b 7 -e 2M -f 8 || ok=0
    notes+=("$pass_note")
    left=$((limit - (SECONDS - start) - 15))
    hosts_pass hosts2-large "$left" 2 split:2 A,B 0 \
      -x all -d float32,bfloat16 -o sum -b 14680071 -e 64M -f 4 || ok=0
    notes+=("$pass_note")
  fi
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

# ucx_busbw LABEL TRANSPORT: all-reduce and send/recv at 64 and 256 MB, 2
# GPU ranks as pretend hosts over TRANSPORT; JSON in ucx-busbw-LABEL.jsonl.
ucx_busbw() {
  HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_HOSTID=A,B HETCCL_TRANSPORT=$2 \
    UCX_TLS=tcp timeout $(($3 + 15)) "$perf" -np 2 -D split:2 --check 0 \
    -w 2 -n 5 -x allreduce,sendrecv -b 64M -e 256M -f 4 --timeout "$3" \
    --json "$out/ucx-busbw-$1.jsonl" >"$out/ucx-busbw-$1.log" 2>&1
}

step_ucx() {
  if [[ ! -e $build/src/libhetccl-ucx.so ]]; then
    result=SKIP note="no libhetccl-ucx.so: the build found no UCX (DEBIAN_UCX)"
    return
  fi
  local start=$SECONDS ok=1 notes=()
  HETCCL_HOSTID=A,B UCX_TLS=tcp HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=NET \
    matrix_pass ucx all-types $((limit / 2)) -x all -d all -o "$plain_ops" \
    -b 7 -e 2M -f 8 || ok=0
  notes+=("$pass_note; $(grep -c 'ucx transport (rank [01]): 1 link' \
    "$out/matrix-ucx-all-types.log") ranks on ucx links")
  local left=$(((limit - (SECONDS - start) - 30) / 2))
  if ((left < 20)); then
    notes+=("busbw: skipped (no time left)")
  else
    ucx_busbw ucx ucx "$left" || ok=0
    ucx_busbw tcp tcp "$left" || ok=0
    notes+=("busbw GB/s ucx vs tcp: $("$py" - "$out" <<'PY'
import json, sys
rows = {}
for label in ("ucx", "tcp"):
    try:
        for line in open(f"{sys.argv[1]}/ucx-busbw-{label}.jsonl"):
            r = json.loads(line)
            if not r["inplace"]:
                rows.setdefault((r["coll"], r["bytes"]), {})[label] = r["busbw_GBps"]
    except OSError:
        pass
print(", ".join(f"{c} {b >> 20}M {v.get('ucx', 0):.2f}/{v.get('tcp', 0):.2f}"
                for (c, b), v in sorted(rows.items())))
PY
)")
  fi
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

# ucx_gpu_env: runs its arguments with CUDA_UCX's UCX ahead of any other.
ucx_gpu_env() {
  LD_LIBRARY_PATH="$CUDA_UCX/lib:$LD_LIBRARY_PATH" \
    UCX_MODULE_DIR="$CUDA_UCX/lib/ucx" UCX_TLS=tcp,cuda_copy "$@"
}

# UCX's bounce buffers for GPU memory over tcp: 4 MB instead of its 512 KB.
big_fragments=UCX_RNDV_FRAG_SIZE=host:4M,cuda:4M

# ucx_perftest_bw LABEL MEMORY [VAR=VALUE...]: ucx_perftest's tag bandwidth
# (MB/s) at 64 MB between two processes, buffers in MEMORY (cuda or host).
ucx_perftest_bw() {
  local label=$1 memory=$2 port=$((20000 + RANDOM % 20000))
  shift 2
  local run=(ucx_gpu_env env "$@" timeout 60 "$CUDA_UCX/bin/ucx_perftest")
  local args=(-t tag_bw -m "$memory,$memory" -s 67108864 -n 40 -p "$port")
  "${run[@]}" "${args[@]}" >"$out/ucx-perftest-$label-server.log" 2>&1 &
  sleep 2
  "${run[@]}" 127.0.0.1 "${args[@]}" >"$out/ucx-perftest-$label.log" 2>&1
  wait
  awk '/Final:/ {print $7}' "$out/ucx-perftest-$label.log"
}

# ucx_gpu_link MEMORY: one ucx link's bandwidth between two processes
# (bench/link_bandwidth.cc, built with CMAKE_ARGS=-DHETCCL_BUILD_BENCH=ON),
# buffers in MEMORY handed to it as they are.
ucx_gpu_link() {
  local tool=$build/bench/link-bandwidth
  [[ -x $tool ]] || { echo "(no link-bandwidth)"; return; }
  ucx_gpu_env env HETCCL_UCX_GPU=1 timeout 60 "$tool" --transport ucx \
    --sizes 1M,64M --bytes 256M --memory "$1" >"$out/ucx-gpu-link-$1.log" 2>&1
  grep -o '[0-9.]* GB/s' "$out/ucx-gpu-link-$1.log" | cut -d' ' -f1 | paste -sd'|'
}

# ucx_gpu_busbw LABEL ROUND TRANSPORT SECONDS [VAR=VALUE...]: as ucx_busbw,
# with CUDA_UCX's UCX and the variables given.
ucx_gpu_busbw() {
  local label=$1 round=$2 transport=$3 seconds=$4
  shift 4
  ucx_gpu_env env HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_HOSTID=A,B \
    HETCCL_TRANSPORT=$transport "$@" timeout $((seconds + 15)) "$perf" -np 2 \
    -D split:2 --check 0 -w 2 -n 5 -x allreduce,sendrecv -b 64M -e 256M -f 4 \
    --timeout "$seconds" --json "$out/ucx-gpu-busbw-$label-$round.jsonl" \
    >"$out/ucx-gpu-busbw-$label-$round.log" 2>&1
}

step_net_gpu() {
  local plugin=$build/libnccl-net-hetccl-test.so ok=1 notes=() direct
  if ! g++ -O2 -std=c++17 -shared -fPIC -fvisibility=hidden -I"$repo/src" \
    -o "$plugin" "$repo/tests/net_plugin/standin_net.cc" -ldl \
    >"$out/net-gpu-plugin-build.log" 2>&1; then
    result=FAIL note="the stand-in plugin did not build: $(tail -1 "$out/net-gpu-plugin-build.log")"
    return
  fi
  export HETCCL_HOSTID=A,B HETCCL_NET_PLUGIN=$plugin HETCCL_DEBUG=INFO \
    HETCCL_DEBUG_SUBSYS=INIT,NET
  HETCCL_TEST_NET_PTR_CUDA=1 HETCCL_NET_GPU=1 matrix_pass net gpu-direct \
    $((limit / 3)) -x all -d all -o "$plain_ops" -b 7 -e 2M -f 8 || ok=0
  direct=$(grep -c 'GPU buffers go to 1 of them as they are' "$out/matrix-net-gpu-direct.log")
  ((direct == 2)) || ok=0
  notes+=("$pass_note; $direct ranks hand GPU buffers to the plugin (2 expected)")
  HETCCL_TEST_NET_PTR_CUDA=1 HETCCL_TEST_NET_DEVICES=2 HETCCL_NET_DEVICES=0,1 \
    matrix_pass net gpu-direct-rails $((limit / 4)) -x all -d float32 -o sum \
    -b 14680071 -e 64M -f 4 || ok=0
  notes+=("$pass_note; $(grep -c 'devices 0 (standin0), 1 (standin1)' \
    "$out/matrix-net-gpu-direct-rails.log") ranks on 2 rails")
  # Devices of DMA-BUF only: GPU buffers through the descriptor where the
  # GPU exports one (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED), else staged.
  HETCCL_TEST_NET_PTR_DMABUF=1 matrix_pass net gpu-dmabuf $((limit / 4)) \
    -x all -d float32,bfloat16 -o sum,max -b 7 -e 4M -f 8 || ok=0
  notes+=("$pass_note; $(grep -c 'GPU buffers through DMA-BUF' \
    "$out/matrix-net-gpu-dmabuf.log") ranks through DMA-BUF, $(grep -c \
    'stand-in: regMrDmaBuf of' "$out/matrix-net-gpu-dmabuf.log") say regMrDmaBuf")
  matrix_pass net gpu-staged $((limit / 4)) -x all -d float32,bfloat16 \
    -o sum,max -b 7 -e 4M -f 8 || ok=0
  direct=$(grep -c 'GPU buffers go to' "$out/matrix-net-gpu-staged.log")
  ((direct == 0)) || ok=0
  notes+=("$pass_note; $direct ranks hand GPU buffers to a host-memory plugin (0 expected)")
  unset HETCCL_HOSTID HETCCL_NET_PLUGIN HETCCL_DEBUG HETCCL_DEBUG_SUBSYS
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

step_ucx_gpu() {
  if [[ -z ${CUDA_UCX:-} || ! -x $CUDA_UCX/bin/ucx_info ]]; then
    result=SKIP note="no CUDA_UCX (a UCX built with CUDA; scripts/build-ucx-cuda.sh)"
    return
  fi
  if [[ ! -e $build/src/libhetccl-ucx.so ]]; then
    result=SKIP note="no libhetccl-ucx.so: the build found no UCX (DEBIAN_UCX)"
    return
  fi
  local start=$SECONDS ok=1 notes=() code
  ucx_gpu_env "$CUDA_UCX/bin/ucx_info" -d >"$out/ucx-gpu-info.log" 2>&1
  ucx_gpu_env env HETCCL_NCCL_LIBRARY="$real_nccl" "$build/tools/hetccl-info" \
    >"$out/ucx-gpu-hetccl-info.log" 2>&1
  notes+=("ucx_info: $(grep -c 'Transport: cuda_copy' "$out/ucx-gpu-info.log") cuda_copy; hetccl-info: $(grep -o 'memory host[^;]*' "$out/ucx-gpu-hetccl-info.log" | head -1)")
  grep -q 'memory host, cuda' "$out/ucx-gpu-hetccl-info.log" || ok=0
  HETCCL_HOSTID=A,B HETCCL_UCX_GPU=1 HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT,NET \
    ucx_gpu_env matrix_pass ucx gpu-direct $((limit / 3)) -x all -d all \
    -o "$plain_ops" -b 7 -e 2M -f 8
  code=$?
  ((code != 0)) && ok=0
  notes+=("$pass_note; $(grep -c 'GPU buffers go to 1 of them' \
    "$out/matrix-ucx-gpu-direct.log") ranks hand GPU buffers to UCX")
  HETCCL_HOSTID=A,B HETCCL_UCX_GPU=1 ucx_gpu_env matrix_pass ucx gpu-direct-large \
    $((limit / 4)) -x all -d float32 -o sum -b 14680071 -e 64M -f 4 || ok=0
  notes+=("$pass_note")
  notes+=("link alone (link-bandwidth, 1 and 64 MB) GB/s: $(ucx_gpu_link cuda) from GPU memory, $(ucx_gpu_link host) from host memory")
  notes+=("ucx_perftest tag_bw 64 MB MB/s: cuda $(ucx_perftest_bw cuda cuda), cuda with 4 MB fragments $(ucx_perftest_bw cuda-frag4M cuda "$big_fragments"), host $(ucx_perftest_bw host host)")
  local left=$(((limit - (SECONDS - start) - 120) / 8)) round
  if ((left < 15)); then
    notes+=("busbw: skipped (no time left)")
  else
    for round in 1 2; do
      ucx_gpu_busbw direct "$round" ucx "$left" HETCCL_UCX_GPU=1
      ucx_gpu_busbw direct-frag4M "$round" ucx "$left" HETCCL_UCX_GPU=1 "$big_fragments"
      ucx_gpu_busbw staged "$round" ucx "$left" HETCCL_DEBUG=INFO \
        HETCCL_DEBUG_SUBSYS=INIT
      ucx_gpu_busbw tcp "$round" tcp "$left"
    done
    local handing
    handing=$(grep -c 'GPU buffers go to' "$out/ucx-gpu-busbw-staged-1.log")
    ((handing == 0)) || ok=0
    notes+=("HETCCL_UCX_GPU=auto without RDMA: $handing ranks hand GPU buffers to UCX (0 expected)")
    notes+=("busbw GB/s direct/direct-frag4M/staged/tcp, medians of 2 rounds: $("$py" - "$out" <<'PY'
import glob, json, statistics, sys
labels = ("direct", "direct-frag4M", "staged", "tcp")
rows = {}
for label in labels:
    for path in glob.glob(f"{sys.argv[1]}/ucx-gpu-busbw-{label}-*.jsonl"):
        for line in open(path):
            r = json.loads(line)
            if not r["inplace"]:
                rows.setdefault((r["coll"], r["bytes"]), {}).setdefault(label, []).append(r["busbw_GBps"])
def cell(v, label):
    return f"{statistics.median(v[label]):.2f}" if label in v else "-"
print(", ".join(f"{c} {b >> 20}M " + "/".join(cell(v, l) for l in labels)
                for (c, b), v in sorted(rows.items())))
PY
)")
  fi
  notes+=("threads of one process, 64 MB busbw GB/s all-reduce|send/recv: $(ucx_gpu_threads)") || ok=0
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

# ucx_gpu_threads: single_process_check --threads with its ranks on GPU 0 as
# pretend hosts, GPU buffers direct, staged and over tcp; prints each
# one's bus bandwidths, fails if a check failed.
ucx_gpu_threads() {
  local check label transport gpu failed=0 summary=()
  check=$(built_check single_process_check)
  [[ -n $check ]] || { echo "single_process_check not built"; return 1; }
  for label in direct:ucx:1 staged:ucx:0 tcp:tcp:auto; do
    IFS=: read -r label transport gpu <<<"$label"
    ucx_gpu_env env HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_DOMAINS=split:2 \
      HETCCL_HOSTID=A,B HETCCL_TRANSPORT="$transport" HETCCL_UCX_GPU="$gpu" \
      CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 90 "$check" --threads \
      --devices 0,0 --busbw 67108864 >"$out/ucx-gpu-threads-$label.log" 2>&1 ||
      failed=1
    summary+=("$label $(grep -o 'busbw [0-9.]*' "$out/ucx-gpu-threads-$label.log" |
      cut -d' ' -f2 | paste -sd'|') ($(grep -c '^PASS' "$out/ucx-gpu-threads-$label.log") PASS)")
  done
  echo "${summary[*]}"
  return "$failed"
}

# share WEIGHT TOTAL: the seconds of the step's time left (less 15 for the
# timeout's grace) for a pass of WEIGHT when the passes still to run weigh
# TOTAL together.
share() { echo $(((limit - (SECONDS - step_start) - 15) * $1 / $2)); }

# 4 ranks on 2 GPUs, ranks 0 and 2 on GPU 0, 1 and 3 on GPU 1; domains
# 0,0,1,1: each domain a pair of ranks on the 2 GPUs, run by NCCL, the
# domains linked by tcp. As pretend hosts A,A,B,B (a host per domain), then
# A,B,C,D (every rank a host of its own): every collective, type and op at
# sizes 7 B to 448 KB (x16), then float32 sums at odd sizes of 14 and 56 MB.
step_hosts4() {
  step_start=$SECONDS
  local notes=() code ok=1 hostids tag seconds weight=6
  for hostids in A,A,B,B A,B,C,D; do
    tag=${hostids//,/}
    seconds=$(share 2 "$weight")
    weight=$((weight - 2))
    if ((seconds < 20)); then
      notes+=("$tag: skipped (no time left)")
      ok=0 weight=$((weight - 1))
      continue
    fi
    hosts_pass "hosts4-$tag-all-types" "$seconds" 4 0,0,1,1 "$hostids" 2 \
      -x all -d all -o "$plain_ops" -b 7 -e 1M -f 16
    code=$?
    notes+=("$pass_note")
    ((code != 0)) && ok=0
    seconds=$(share 1 "$weight")
    weight=$((weight - 1))
    if ((code == 124 || seconds < 20)); then
      notes+=("$tag large: skipped (no time left, or the first pass timed out)")
      continue
    fi
    hosts_pass "hosts4-$tag-large" "$seconds" 4 0,0,1,1 "$hostids" 2 \
      -x all -d float32 -o sum -b 14680071 -e 64M -f 4 || ok=0
    notes+=("$pass_note")
  done
  ((ok)) && result=PASS
  note=$(IFS=";"; echo "${notes[*]}")
}

# bench_script NAME SCRIPT REPORT ARGS...: runs a bench script; its report
# goes to $out and bench/results/.
bench_script() {
  local name=$1 script=$2 report=$3
  shift 3
  bench_run "$name" "$script" "$report" --nccl-library "$real_nccl" "$@"
}

# bench_script without NVIDIA's NCCL, for the scripts that do not drive it.
bench_run() {
  local name=$1 script=$2 report=$3
  shift 3
  # --deadline leaves the script time to write its report before the
  # timeout would kill it.
  timeout "$limit" "$py" "$repo/bench/$script" --build-dir "$build" \
    --out "$out/$report" --log-dir "$out/$name-logs" \
    --deadline $((limit - 20)) "$@" >"$out/$name.log" 2>&1
  local code=$?
  grep '^MISSED TARGET\|^FAILED RUN\|^KEY ' "$out/$name.log" | head -20
  if [[ -f $out/$report && -n $results_dir ]]; then
    mkdir -p "$results_dir" && cp "$out/$report" "$results_dir/"
  fi
  local misses
  misses=$(grep -c '^MISSED TARGET' "$out/$name.log")
  ((code == 0)) && result=PASS
  note="exit $code; $misses target(s) missed; $(grep '^KEY ' "$out/$name.log" | cut -c5- | tr '\n' ' ')"
}

# Speed of every collective with GPU buffers across 2 domains (2 GPUs,
# shm), stream-driven (the default) and staged (HETCCL_GPU_DIRECT=0):
# busbw by size.
step_hetero_all() {
  local code=0 mode
  for mode in direct staged; do
    local direct=1
    [[ $mode == staged ]] && direct=0
    HETCCL_NCCL_LIBRARY="$real_nccl" HETCCL_TRANSPORT=shm HETCCL_GPU_DIRECT=$direct \
      timeout $((limit / 2)) "$perf" -np 2 -D split:2 -b 1M -e 256M -f 4 -w 5 -n 10 \
      --check 0 --placement out --timeout $((limit / 2 - 5)) \
      -x allreduce,allgather,reducescatter,broadcast,alltoall,reduce,gather,scatter,sendrecv \
      --json "$out/hetero-all-$mode.jsonl" >"$out/hetero-all-$mode.log" 2>&1 || code=$?
  done
  "$py" - "$out" <<'EOF'
import json, sys
from pathlib import Path
rows = {}
for mode in ("direct", "staged"):
    path = Path(sys.argv[1]) / f"hetero-all-{mode}.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        rec = json.loads(line)
        rows.setdefault((rec["coll"], rec["bytes"]), {})[mode] = rec["busbw_GBps"]
print("HETERO-ALL collective      size  direct busbw  staged busbw  (GB/s)")
for (coll, size), by_mode in rows.items():
    cells = [f"{by_mode[m]:12.2f}" if m in by_mode else f"{'-':>12}"
             for m in ("direct", "staged")]
    print(f"HETERO-ALL {coll:14s} {size >> 20:4d}M {cells[0]}  {cells[1]}")
EOF
  ((code == 0)) && result=PASS
  note="exit $code; $(cat "$out"/hetero-all-*.jsonl 2>/dev/null | grep -c '') results"
}

# What the pass-through adds per launch, NVIDIA's NCCL and HetCCL in the
# same processes (bench/passthrough_overhead.cc), 8 B to 4 MB; the sweep's
# separate processes differ by microseconds from one run to the next alone.
# Targets as the sweep's: +1 us below 64 KB, 0.99x from 1 MB.
step_overhead() {
  local tool report=$out/passthrough-overhead-$today.md
  tool=$(built_check passthrough_overhead)
  if [[ -z $tool ]]; then
    result=SKIP note="passthrough_overhead not built"
    return
  fi
  local command=("$tool" "$real_nccl" "${OVERHEAD_SIZES:-8:4194304}" 11 200)
  timeout "$limit" "${command[@]}" >"$out/overhead.log" 2>&1
  local code=$?
  local misses
  misses=$(awk '$3 == "|" && (($2 < 65536 && $6 > 1.0) || ($2 >= 1048576 && $7 < 0.99)) {print $1, $2, $6, $7}' "$out/overhead.log")
  grep -E '^(allreduce|allgather|reducescatter|broadcast|alltoall) ' "$out/overhead.log" | head -100
  {
    echo "# Pass-through overhead: NVIDIA NCCL and HetCCL in the same processes"
    echo
    echo "Run on $(date -Iseconds) by tests/gpu/run.sh (step overhead) on $(nvidia-smi -L | wc -l) GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)); command:"
    echo
    echo "    build-gpu/passthrough_overhead <NVIDIA libnccl.so.2> ${command[*]:2}"
    echo
    echo "Targets: +us <= 1.0 below 64 KB; ratio >= 0.99 from 1 MB. Missed:"
    echo "${misses:-none}" | sed 's/^/    /'
    echo
    echo '```'
    grep -v '^ *$' "$out/overhead.log"
    echo '```'
  } >"$report"
  [[ -n $results_dir ]] && mkdir -p "$results_dir" && cp "$report" "$results_dir/"
  ((code == 0)) && result=PASS
  note="exit $code; targets missed: $(echo -n "$misses" | grep -c '') ($(echo "$misses" | head -3 | tr '\n' ';'))"
}

step_sweep() {
  # shellcheck disable=SC2086  # SWEEP_ARGS is a list of words
  bench_script sweep gpu_sweep.py "gpu-sweep-$today.md" ${SWEEP_ARGS:-}
}

step_hetero() {
  # shellcheck disable=SC2086
  bench_script hetero gpu_hetero_allreduce.py "gpu-hetero-allreduce-$today.md" ${HETERO_ARGS:-}
}

# Before/after: the same 2-domain all-reduce from the earlier build and
# this one, in turns (bench/compare_builds.py).
step_compare() {
  if [[ -z ${BASE_SRC:-} ]]; then
    result=SKIP note="BASE_SRC not set"
    return
  fi
  [[ -n $base_pid ]] && wait "$base_pid"
  if [[ ! -x $base_build/tools/hetccl-perf || ! -e $base_build/src/libhetccl-cuda.so ]]; then
    tail -20 "$out/build-base.log"
    note="the base build failed"
    return
  fi
  local report=$out/compare-builds-gpu-$today.md
  timeout "$limit" "$py" "$repo/bench/compare_builds.py" --own-tools --before "$base_build" \
    --after "$build" --rounds "${COMPARE_ROUNDS:-3}" --out "$report" \
    --label "2 H200 as 2 domains over shm, all-reduce" \
    --env HETCCL_NCCL_LIBRARY="$real_nccl" --env HETCCL_TRANSPORT=shm \
    -- -np 2 -D split:2 -x allreduce -d float32 -o sum -b 64M -e 1G -f 4 \
    -w 3 -n 10 --check 0 --placement out --timeout $((limit / 7)) \
    >"$out/compare.log" 2>&1
  local code=$?
  tail -8 "$out/compare.log"
  [[ -f $report && -n $results_dir ]] && mkdir -p "$results_dir" && cp "$report" "$results_dir/"
  ((code == 0)) && result=PASS
  note="exit $code; $(grep '| 1G |' "$out/compare.log" | tr -s ' ')"
}

# link-bandwidth, the yardstick of cross-host busbw, lives in bench/, which
# the build step leaves out: configure it in and build it alone.
build_link_tool() {
  [[ -x $build/bench/link-bandwidth ]] && return
  timeout "$limit" cmake -S "$repo" -B "$build" -DHETCCL_BUILD_BENCH=ON \
    >"$out/cmake-bench.log" 2>&1 &&
    timeout "$limit" cmake --build "$build" -j "$(nproc)" \
      --target link-bandwidth >"$out/build-bench.log" 2>&1
}

step_queue_depth() {
  local tool=$out/gpu_queue_depth
  if ! timeout "$limit" nvcc -O2 -std=c++17 -o "$tool" \
    "$repo/bench/gpu_queue_depth.cu" -lcuda >"$out/queue-depth-build.log" 2>&1; then
    tail -5 "$out/queue-depth-build.log"
    result=FAIL note="nvcc failed"
    return
  fi
  timeout "$limit" "$tool" >"$out/queue-depth.md" 2>&1 || {
    tail -5 "$out/queue-depth.md"
    result=FAIL note="gpu_queue_depth failed"
    return
  }
  cat "$out/queue-depth.md"
  result=PASS
  note=$(grep -E '^\| (kernel|send piece|receive piece)' "$out/queue-depth.md" |
    awk -F'|' '{printf "%s/%s streams: %s; ", $2, $3, $4}')
}

# Where a GPU rank's large launch holds its calling thread (#36: the
# 256 MB all-reduce and send/recv between pretend hosts spend about half
# their time in the enqueue, all-gather and reduce-scatter almost none,
# as if each staging stream held about 1,020 pending operations and a
# launch added about 380 or 190). The share per number of launches in a
# row tells whether it follows that queue (1 - 1,020 / (n x 380)). 2 ranks
# as pretend hosts over tcp on GPU 0: send/recv and all-gather at 256 MB
# timed over 1, 2, 3, 4, 6 and 10 launches in a row (-n), with 16M and
# 64M chunks, and with 16M chunks and up to 4 pieces per staging copy
# (HETCCL_STAGED_COPY_PIECES=4: half the staging operations), always and
# only while a staging stream lags (HETCCL_STAGED_RUNS_FROM=0 and 64), and
# with 16M chunks over 2 and 4 pairs of staging streams
# (HETCCL_STAGING_STREAMS: each stream its own queue); then
# the stacks of the launching threads (gdb, else cuda-gdb) sampled twice
# during a long send/recv loop, as 2 processes
# and as 2 threads of one process: enqueue-hold.md counts the innermost
# frames of the threads inside a launch, the raw stacks beside it.
step_enqueue_hold() {
  local report=$out/enqueue-hold.md setting chunk pieces from pairs n tag debugger pid ranks rank i
  {
    echo "# Where a 256 MB launch holds its caller ($today)"
    echo
    echo "| chunk | pieces per copy | runs from | stream pairs | launches | collective | enqueue us | op us | share |"
    echo "|---|---:|---:|---:|---:|---|---:|---:|---:|"
  } >"$report"
  for setting in 16M:1:0:1 64M:1:0:1 16M:4:0:1 16M:4:64:1 16M:1:0:2 16M:1:0:4; do
    IFS=: read -r chunk pieces from pairs <<<"$setting"
    for n in 1 2 3 4 6 10; do
      tag=enqueue-hold-$chunk-$pieces-$from-$pairs-$n
      timeout -k 5 60 env HETCCL_CHUNK="$chunk" HETCCL_STAGED_RUNS_FROM="$from" \
        HETCCL_STAGING_STREAMS="$pairs" \
        HETCCL_STAGED_COPY_PIECES="$pieces" HETCCL_HOSTID=A,B \
        HETCCL_TRANSPORT=tcp "$perf" -np 2 -D 0,1 -x sendrecv,allgather \
        -d float32 --check 0 --placement out -b 256M -e 256M -w 2 -n "$n" \
        --timeout 50 --json "$out/$tag.json" >"$out/$tag.log" 2>&1
      "$py" - "$out/$tag.json" "$chunk" "$pieces" "$from" "$pairs" "$n" >>"$report" 2>/dev/null <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"| {' | '.join(sys.argv[2:7])} | {r['coll']} | "
          f"{r['enqueue_us']:.0f} | {r['time_us']:.0f} | "
          f"{r['enqueue_us'] / r['time_us']:.2f} |")
PY
    done
  done
  debugger=$(command -v gdb || command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
  for tag in np t; do
    timeout -k 5 120 env HETCCL_HOSTID=A,B HETCCL_TRANSPORT=tcp "$perf" \
      "-$tag" 2 -D 0,1 -x sendrecv -d float32 --check 0 --placement out -b 256M -e 256M \
      -w 2 -n 400 --timeout 100 >"$out/enqueue-hold-stacks-$tag.log" 2>&1 &
    pid=$!
    sleep 8
    # timeout's child is hetccl-perf; with -np its children are the ranks.
    ranks=$(pgrep -P "$pid" | tr '\n' ' ')
    [[ $tag == np ]] && ranks=$(for rank in $ranks; do pgrep -P "$rank"; done | tr '\n' ' ')
    for i in 1 2; do
      for rank in $ranks; do
        timeout 20 "$debugger" -p "$rank" -batch -ex "thread apply all bt 40" \
          >"$out/enqueue-hold-bt-$tag-$rank-$i.txt" 2>&1
      done
      sleep 0.5
    done
    wait "$pid"
  done
  {
    echo
    echo "Stacks of the threads inside a launch (GpuPlanExecutor), innermost"
    echo "frames up to HetCCL's second, over every sample (debugger: $debugger):"
    echo
    "$py" - "$out" <<'PY'
import collections, glob, re, sys
counts = collections.Counter()
for path in sorted(glob.glob(sys.argv[1] + "/enqueue-hold-bt-*.txt")):
    for block in re.split(r"\n(?=Thread \d+)", open(path, errors="replace").read()):
        if "GpuPlanExecutor::" not in block:
            continue
        names = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?([^\s(]+)", block, re.M)
        # Up to the innermost two of HetCCL's own frames: which call waits.
        ours = [i for i, name in enumerate(names) if name.startswith("hetccl::")]
        counts[" < ".join(names[:ours[1] + 1 if len(ours) > 1 else 8])] += 1
for frames, count in counts.most_common(12):
    print(f"- {count} x `{frames}`")
if not counts:
    print("- no thread inside a launch was sampled")
PY
  } >>"$report"
  cat "$report"
  result=FAIL
  grep -q '^| 16M | 1 | 0 | 1 | 10 | sendrecv' "$report" && result=PASS
  note=$(grep -E '^\| 16M \| [14] \| [0-9]+ \| [124] \| 10 \| sendrecv' "$report" |
    awk -F'|' '{printf "16M, %s per copy from%s,%s stream pairs, 10 launches: share%s; ", $3, $4, $5, $10}')
}

step_cross_host() {
  build_link_tool
  # shellcheck disable=SC2086  # CROSS_HOST_ARGS is a list of words
  bench_run cross-host cross_host.py "cross-host-$today.md" ${CROSS_HOST_ARGS:-}
}

step_net_bench() {
  build_link_tool
  # shellcheck disable=SC2086  # NET_ARGS is a list of words
  bench_script net-bench gpu_network_compare.py "gpu-network-compare-$today.md" ${NET_ARGS:-}
}

# torch_launch NPROC SECONDS LOG [VAR=VALUE ...] -- SCRIPT [ARGS...]: one
# torchrun of NPROC ranks (the script puts rank r on GPU r % count) with
# the variables added to its environment; returns its exit status (124:
# timed out).
torch_launch() {
  local nproc=$1 seconds=$2 log=$3 vars=()
  shift 3
  while (($#)) && [[ $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  (($#)) && shift
  timeout -k 10 "$seconds" env "${vars[@]}" "$py" -m torch.distributed.run \
    --standalone --nproc_per_node "$nproc" "$@" >"$log" 2>&1
}

# A small GPT trained with unchanged PyTorch (tests/gpu/torch_gpt_training.py),
# fsdp2 then ddp, each with: NVIDIA's NCCL over NVLink; HetCCL preloaded,
# 2 ranks as 2 pretend hosts (tcp); NVIDIA's NCCL over sockets (its default
# socket settings, its INFO log naming the transport); HetCCL with 4 ranks on the 2 GPUs as hosts A,A,B,B and
# A,B,C,D (NVIDIA's NCCL cannot run 2 ranks per GPU). HetCCL's variables go
# through torchrun's environment to every rank. PASS: every run exits 0
# printing DONE, RANKS_AGREE yes and no PARAMS_AGREE no; HetCCL's runs'
# links are tcp only; every HetCCL loss curve is within 5 % (relative, at
# every step) of NCCL NVLink's in the same mode (every run sees the same
# data per step; only the order of the sums differs). The note and
# train-gpt-<date>.md give the tokens/s of each run, HetCCL's 2-rank
# tokens/s as a fraction of NCCL's over sockets and over NVLink, and the
# loss curves' differences.
step_train() {
  step_start=$SECONDS
  local script=$repo/tests/gpu/torch_gpt_training.py steps=${TRAIN_STEPS:-30}
  local report=$out/train-gpt-$today.md manifest=$out/train-runs.tsv
  local hetccl=(LD_PRELOAD="$build/src/libnccl.so.2" HETCCL_NCCL_LIBRARY="$real_nccl"
    HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT)
  local sockets=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT)
  local mode config nproc vars log code left began links shown
  : >"$manifest"
  for mode in fsdp2 ddp; do
    for config in nccl-nvlink hetccl-2hosts nccl-sockets hetccl-4-AABB hetccl-4-ABCD; do
      case $config in
        nccl-nvlink) nproc=2 vars=() ;;
        nccl-sockets) nproc=2 vars=("${sockets[@]}") ;;
        hetccl-2hosts) nproc=2 vars=("${hetccl[@]}" HETCCL_DOMAINS=split:2 "HETCCL_HOSTID=A,B") ;;
        hetccl-4-AABB) nproc=4 vars=("${hetccl[@]}" "HETCCL_DOMAINS=0,0,1,1" "HETCCL_HOSTID=A,A,B,B") ;;
        hetccl-4-ABCD) nproc=4 vars=("${hetccl[@]}" "HETCCL_DOMAINS=0,0,1,1" "HETCCL_HOSTID=A,B,C,D") ;;
      esac
      log=$out/train-$mode-$config.log
      shown="${vars[*]:+${vars[*]} }$py -m torch.distributed.run --standalone"
      shown+=" --nproc_per_node $nproc tests/gpu/torch_gpt_training.py --mode $mode --steps $steps"
      left=$((limit - (SECONDS - step_start) - 15))  # 15 s kept for the report
      if ((left < 30)); then
        printf '%s\t%s\t%s\tskipped\t0\t%s\t-\t%s\n' "$mode" "$config" "$nproc" "$log" \
          "$shown" >>"$manifest"
        echo "train $mode $config: skipped (no time left)"
        continue
      fi
      began=$SECONDS
      torch_launch "$nproc" $((left < 120 ? left : 120)) "$log" "${vars[@]}" -- \
        "$script" --mode "$mode" --steps "$steps"
      code=$?
      links=-
      if [[ $config == hetccl-* ]]; then
        links=$(tcp_links "$log" "$nproc")
      elif [[ $config == nccl-sockets ]]; then  # NCCL's INFO: "... via NET/Socket/0"
        links=$(grep -o ' via [^ ]*' "$log" | sed 's/^ via //' | sort -u | paste -sd, -)
        links="via ${links:-nothing logged}"
      fi
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$config" "$nproc" "$code" \
        $((SECONDS - began)) "$log" "$links" "$shown" >>"$manifest"
      echo "train $mode $config: exit $code, $((SECONDS - began)) s;" \
        "$(grep -h '^TOKENS_PER_S\|^RANKS_AGREE\|^DONE' "$log" | tr '\n' ' ')"
      ((code != 0)) && tail -5 "$log"
    done
  done
  "$py" - "$manifest" "$report" "$repo" >"$out/train-summary.log" 2>&1 <<'EOF'
"""Judges the training runs listed in the manifest and writes the record."""
import datetime
import math
import re
import struct
import subprocess
import sys
from pathlib import Path

manifest, report, repo = sys.argv[1:4]
TOLERANCE = 0.05  # relative loss difference to NCCL NVLink, at every step
CONFIGS = ("nccl-nvlink", "nccl-sockets", "hetccl-2hosts", "hetccl-4-AABB",
           "hetccl-4-ABCD")


def first_line(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out or "unknown"


def read_run(fields):
    mode, config, nproc, code, seconds, log, links, command = fields
    path = Path(log)
    text = path.read_text(errors="replace") if path.exists() else ""
    if code == "skipped":
        text = ""

    def value(key):
        found = re.findall(rf"^{key} (.*)$", text, re.M)
        return found[-1].strip() if found else None

    def number(key):
        try:
            return float(value(key))
        except (TypeError, ValueError):
            return None

    losses = None
    try:
        if value("LOSSES_HEX"):
            losses = [struct.unpack("<f", bytes.fromhex(h))[0]
                      for h in value("LOSSES_HEX").split(",")]
        elif value("LOSSES"):
            losses = [float(x) for x in value("LOSSES").split()]
    except ValueError:
        losses = None
    run = {"mode": mode, "config": config, "nproc": int(nproc),
           "code": code, "seconds": seconds, "log": log, "links": links,
           "command": command, "done": bool(re.search(r"^DONE$", text, re.M)),
           "agree": value("RANKS_AGREE"), "params": value("PARAMS_AGREE"),
           "tokens": number("TOKENS_PER_S"), "step": number("STEP_MS"),
           "compute": number("COMPUTE_MS"),
           "exposed": number("COMM_EXPOSED_MS"), "losses": losses,
           "config_line": value("CONFIG"), "diff": None}
    problems = []
    if code == "skipped":
        problems.append("not run (no time left)")
    else:
        if code != "0":
            problems.append(f"exit {code}" + (" (timed out)"
                                              if code in ("124", "137")
                                              else ""))
        if not run["done"]:
            problems.append("no DONE")
        if run["agree"] != "yes":
            problems.append(f"RANKS_AGREE {run['agree'] or 'missing'}")
        if run["params"] == "no":
            problems.append("PARAMS_AGREE no")
        if config.startswith("hetccl") and not links.startswith("tcp only"):
            problems.append(f"links: {links}")
        if (config == "nccl-sockets" and links != "via nothing logged" and
                "NET/Socket" not in links):
            problems.append(f"NCCL not on its sockets ({links})")
    run["problems"] = problems
    return run


def max_rel_diff(curve, reference):
    if not curve or not reference or len(curve) != len(reference):
        return None
    worst = 0.0
    for x, y in zip(curve, reference):
        if not (math.isfinite(x) and math.isfinite(y)):
            return math.inf
        worst = max(worst, abs(x - y) / max(abs(y), 1e-12))
    return worst


runs = [read_run(line.split("\t"))
        for line in Path(manifest).read_text().splitlines() if line]
by_key = {(r["mode"], r["config"]): r for r in runs}
modes = list(dict.fromkeys(r["mode"] for r in runs))


def get(mode, config, key):
    run = by_key.get((mode, config))
    return run[key] if run else None


for run in runs:
    if run["config"] == "nccl-nvlink":
        continue
    reference = get(run["mode"], "nccl-nvlink", "losses")
    run["diff"] = max_rel_diff(run["losses"], reference)
    if (run["config"].startswith("hetccl") and run["diff"] is not None and
            run["diff"] > TOLERANCE):
        run["problems"].append(f"loss differs from NCCL NVLink's by "
                               f"{run['diff']:.3g} > {TOLERANCE:g}")


def fmt(value, spec=".1f"):
    return "-" if value is None else format(value, spec)


def diff_text(value):
    if value is None:
        return "-"
    return "0 (bit-identical)" if value == 0 else f"{value:.2e}"


def ratio(a, b):
    return a / b if a is not None and b else None


notes, fractions = [], []
for mode in modes:
    het = get(mode, "hetccl-2hosts", "tokens")
    sock = get(mode, "nccl-sockets", "tokens")
    nvl = get(mode, "nccl-nvlink", "tokens")
    fractions.append((mode, ratio(het, sock), ratio(het, nvl)))
    tokens = ", ".join(f"{c} {fmt(get(mode, c, 'tokens'), '.0f')}"
                       for c in CONFIGS)
    diffs = ", ".join(f"{c} {diff_text(get(mode, c, 'diff'))}"
                      for c in CONFIGS[1:])
    notes.append(f"{mode} tokens/s: {tokens}; hetccl-2hosts/sockets "
                 f"{fmt(ratio(het, sock), '.2f')}, /nvlink "
                 f"{fmt(ratio(het, nvl), '.2f')}; loss max rel diff vs "
                 f"nvlink: {diffs}")
bad = [f"{r['mode']} {r['config']}: {', '.join(r['problems'])}"
       for r in runs if r["problems"]]
ok = bool(runs) and not bad

header = ("| mode | run | ranks | exit | s | DONE | RANKS_AGREE "
          "| PARAMS_AGREE | links (HetCCL) or transport (NCCL) | tokens/s "
          "| step ms | compute ms | comm exposed ms | loss first -> last "
          "| max rel diff vs nccl-nvlink | problems |")
table = [header, "|---|---|---:|---:|---:|:---|:---|:---|---|---:|---:|---:|"
         "---:|---|---:|---|"]
for r in runs:
    losses = r["losses"]
    curve = f"{losses[0]:.4f} -> {losses[-1]:.4f}" if losses else "-"
    table.append(
        f"| {r['mode']} | {r['config']} | {r['nproc']} | {r['code']} | "
        f"{r['seconds']} | {'yes' if r['done'] else 'no'} | "
        f"{r['agree'] or '-'} | {r['params'] or '-'} | {r['links']} | "
        f"{fmt(r['tokens'], '.0f')} | {fmt(r['step'], '.2f')} | "
        f"{fmt(r['compute'], '.2f')} | {fmt(r['exposed'], '.2f')} | {curve} "
        f"| {diff_text(r['diff']) if r['config'] != 'nccl-nvlink' else '-'} "
        f"| {'; '.join(r['problems']) or '-'} |")

commit = first_line(["git", "-C", repo, "rev-parse", "--short", "HEAD"])
changed = first_line(["git", "-C", repo, "status", "--short"])
dirty = "" if changed == "unknown" else \
    f" plus {len(changed.splitlines())} changed or new files in the tree"
shape = next((r["config_line"] for r in runs if r["config_line"]), "unknown")
parts = [
    "# A small GPT trained with unchanged PyTorch: NCCL and HetCCL",
    "",
    f"Run on {datetime.datetime.now().isoformat(timespec='seconds')} by "
    f"`tests/gpu/run.sh` (step train), HetCCL commit {commit}{dirty}.",
    "",
    f"- GPUs: {first_line(['nvidia-smi', '-L']).replace(chr(10), '; ')}",
    "- driver: " + first_line(["nvidia-smi", "--query-gpu=driver_version",
                               "--format=csv,noheader"]).splitlines()[0],
    f"- the runs' shape (CONFIG line): {shape}",
    "",
    "`tests/gpu/torch_gpt_training.py` under torchrun: a GPT-style decoder, "
    "the same initial weights and the same synthetic data per step in "
    "every run (a fixed global batch, each rank taking its 1/world), "
    "AdamW. fsdp2: `fully_shard` per block and the model, bfloat16 "
    "parameters, float32 gradient reduction; ddp: DistributedDataParallel, "
    "fp32. nccl-nvlink: NVIDIA's NCCL as it is; nccl-sockets: NVIDIA's "
    "NCCL forced onto its sockets over loopback (NCCL_P2P_DISABLE=1 "
    "NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo, default "
    "socket threads); hetccl-*: HetCCL preloaded as libnccl.so.2 "
    "(LD_PRELOAD), the GPUs as pretend hosts (HETCCL_HOSTID) so that its "
    "domains meet over tcp; hetccl-4-*: 4 ranks, 2 per GPU, domains "
    "0,0,1,1 (each a pair of ranks on the 2 GPUs, run by NCCL).",
    "",
    "tokens/s: global tokens per second over the steps after 5 warm-up "
    "steps (the slowest rank's wall clock between two CUDA syncs). compute "
    "ms: rank 0's shard trained alone without communication (before the "
    "process group; fsdp2 under bfloat16 autocast); comm exposed ms: step "
    "ms minus compute ms, the communication per step that compute did not "
    "hide (an estimate). max rel diff: the largest |loss - loss of "
    "nccl-nvlink| / loss of nccl-nvlink over the steps, same mode.",
    "",
    f"Target: every run DONE with RANKS_AGREE yes (and PARAMS_AGREE not "
    f"no), HetCCL's links tcp only, HetCCL's losses within "
    f"{TOLERANCE:g} of nccl-nvlink's.",
    "",
    "## Summary", "",
    "Result: " + ("PASS" if ok else "FAIL") + ".", ""]
parts += [f"- {b}" for b in bad] + ([""] if bad else [])
parts += [f"- {mode}: HetCCL 2 pretend hosts reach "
          f"{fmt(s, '.2f')}x the tokens/s of NCCL over sockets and "
          f"{fmt(n, '.2f')}x that of NCCL over NVLink"
          for mode, s, n in fractions]
parts += ["", "## Runs", ""] + table + ["", "## Commands", "",
                                        "From the repository root, with "
                                        "tests/gpu/run.sh's environment "
                                        "(NCCL_NVLS_ENABLE=0 among others):",
                                        "", "```"]
parts += [r["command"] for r in runs]
parts += ["```", "", "## Loss curves", "", "```"]
for r in runs:
    if r["losses"]:
        parts.append(f"{r['mode']:5s} {r['config']:14s} " +
                     " ".join(f"{x:.6g}" for x in r["losses"]))
parts += ["```", ""]
Path(report).write_text("\n".join(parts))
print("\n".join(table))
print("TRAIN_NOTE " + ("" if ok else "FAILED: " + "; ".join(bad) + "; ")
      + "; ".join(notes))
print(f"TRAIN_OK {'yes' if ok else 'no'}")
EOF
  local summary=$?
  grep -v '^TRAIN_' "$out/train-summary.log"
  [[ -f $report && -n $results_dir ]] && mkdir -p "$results_dir" && cp "$report" "$results_dir/"
  note=$(sed -n 's/^TRAIN_NOTE //p' "$out/train-summary.log")
  [[ -n $note ]] || note="the summary failed (exit $summary): $(tail -1 "$out/train-summary.log")"
  grep -q '^TRAIN_OK yes' "$out/train-summary.log" && result=PASS
}

run_step build 360
run_step info 30
run_step module 150
run_step streams 300
run_step one-process 150
run_step graphs 150
run_step faults "${FAULTS_LIMIT:-200}"
run_step mismatch 200
run_step stalls 100
run_step soak $((${SOAK_SECONDS:-300} + 120))
run_step sanitizer 240
run_step collectives 150
run_step ddp 150
run_step matrix-shm 120
run_step matrix-tcp 120
run_step hosts2 150
run_step ucx 150
run_step ucx-gpu 360
run_step net-gpu 240
run_step doctor 200
run_step run-ddp 150
run_step hosts4 200
run_step hetero-all 150
run_step overhead 120
run_step sweep 270
run_step hetero 180
run_step compare 200
run_step net-bench 260
run_step queue-depth 90
run_step enqueue-hold 240
run_step cross-host 240
run_step train 300
summary
exit $failed
