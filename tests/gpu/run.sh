#!/usr/bin/env bash
# The step functions are called by name, through run_step.
# shellcheck disable=SC2317
#
# The GPU checks in one command, for a machine with 2 NVIDIA GPUs and
# PyTorch. In order, each step timed and recorded (a failed step does not
# stop the next ones; the device time is precious, so one run gives all the
# information):
#   build       HetCCL with the CUDA module (-DHETCCL_CUDA_MODULE=ON), and
#               the GPU checks device_module_check and hetero_stream_check
#               when those targets exist
#   info        hetccl-info
#   module      device_module_check on libhetccl-cuda.so, if it was built
#   streams     hetero_stream_check on libhetccl-cuda.so, if it was built
#   collectives every PyTorch collective with NVIDIA's NCCL and with HetCCL
#               preloaded as libnccl.so.2: result digests equal bit for bit
#   ddp         a deterministic DDP training run both ways: losses and final
#               parameters equal bit for bit
#   matrix-shm, matrix-tcp
#               2 GPUs as 2 domains (-D split:2), every collective, type and
#               op, odd sizes, results checked (hetccl-perf --check 1)
#   hetero-all  busbw of every stream-driven collective, 2 GPUs as 2
#               domains over shm, direct and staged (HETCCL_GPU_DIRECT=0)
#   overhead    bench/passthrough_overhead.cc: the time the pass-through
#               adds per launch, both sides in the same processes, 8 B to
#               4 MB, against the sweep's targets
#   sweep       bench/gpu_sweep.py: NVIDIA NCCL vs HetCCL pass-through
#   hetero      bench/gpu_hetero_allreduce.py: 2-domain all-reduce vs NCCL
#               (host path, NVLink), Gloo and pinned copies
#   compare     bench/compare_builds.py: the 2-domain all-reduce (2 GPUs,
#               shm, 64 MB to 1 GB) of an earlier commit's build against
#               this one, alternating rounds (BASE_SRC: that commit's
#               source tree; the build step builds it in build-base beside
#               its own build)
# then prints a summary table (result, seconds, key numbers) and exits 1 if
# any step failed. Logs and reports go to $OUT (default /tmp/hetccl-gpu);
# the bench reports are also copied to bench/results/.
#
# Environment: PYTHON (default: python3 or /opt/torch/.venv/bin/python3,
# whichever imports torch), BUILD_DIR (default build-gpu), STEPS (a
# space-separated subset of the step names above; default all), DEADLINE
# (seconds after which the remaining steps are skipped so that the summary
# still prints; default 570), CMAKE_ARGS (extra configure arguments),
# SWEEP_ARGS / HETERO_ARGS (extra arguments of the bench scripts), BASE_SRC
# (the source tree the compare step measures against; unset: no compare),
# COMPARE_ROUNDS (its alternating rounds per build, default 3),
# RESULTS_DIR (where the bench reports are copied; default bench/results,
# empty: nowhere). Without nvidia-smi (no NVIDIA GPU) it says so and exits 0.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/hetccl-gpu}
mkdir -p "$out"
build=${BUILD_DIR:-$repo/build-gpu}
results_dir=${RESULTS_DIR-$repo/bench/results}
steps=" ${STEPS:-build info module streams collectives ddp matrix-shm matrix-tcp hetero-all overhead sweep hetero compare} "
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

# Runs step function step_NAME unless STEPS leaves it out or time is up. The
# function sets `result` (PASS, FAIL or SKIP) and `note`; it may use $limit,
# the seconds it has left.
run_step() {
  local name=$1 want=$2 start=$SECONDS
  if [[ $steps != *" $name "* ]]; then
    record "$name" SKIP 0 "not in STEPS"
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
if ! [[ $gpus =~ ^[0-9]+$ ]] || ((gpus < 2)); then
  echo "FAIL: $py sees '$gpus' CUDA GPUs; these checks need 2"
  nvidia-smi -L
  exit 1
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
  [[ -n ${BASE_SRC:-} && $steps == *" compare "* ]] || return
  (cmake -S "$BASE_SRC" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHETCCL_BUILD_TESTS=OFF -DHETCCL_BUILD_BENCH=OFF -DHETCCL_CUDA_MODULE=ON &&
    cmake --build "$base_build" -j "$(nproc)") >"$out/build-base.log" 2>&1 &
  base_pid=$!
}

step_build() {
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
  for target in device_module_check hetero_stream_check passthrough_overhead; do
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
step_streams() { module_step hetero_stream_check; }

# torchrun SCRIPT LOG [preload]: one 2-GPU run, at most half the step's time.
torch_run() {
  local script=$1 log=$2 how=${3:-native}
  local prefix=()
  [[ $how == hetccl ]] && prefix=("${preload[@]}")
  timeout $((limit / 2)) "${prefix[@]}" "${torchrun[@]}" "$script" >"$log" 2>&1
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
  pass_note="$name: exit $code, ${rows:-0} results, ${wrong:-?} wrong"
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

# bench_script NAME SCRIPT REPORT ARGS...: runs a bench script; its report
# goes to $out and bench/results/.
bench_script() {
  local name=$1 script=$2 report=$3
  shift 3
  # --deadline leaves the script time to write its report before the
  # timeout would kill it.
  timeout "$limit" "$py" "$repo/bench/$script" --build-dir "$build" \
    --nccl-library "$real_nccl" --out "$out/$report" --log-dir "$out/$name-logs" \
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
      -x allreduce,allgather,reducescatter,broadcast,alltoall \
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

run_step build 360
run_step info 30
run_step module 150
run_step streams 120
run_step collectives 150
run_step ddp 150
run_step matrix-shm 120
run_step matrix-tcp 120
run_step hetero-all 150
run_step overhead 120
run_step sweep 270
run_step hetero 180
run_step compare 200
summary
exit $failed
