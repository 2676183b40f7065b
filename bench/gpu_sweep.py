#!/usr/bin/env python3
"""nccl-tests-style sweep on 2 GPUs: NVIDIA's NCCL beside HetCCL's pass-through.

For each of allreduce, allgather, reducescatter, broadcast and alltoall, from
8 B to 4 GB (x2), runs `hetccl-perf -np 2 --check 0 --placement out` twice:
with `--nccl-library <NVIDIA NCCL>` (native: the tool calls NVIDIA's NCCL
directly) and with the HetCCL it links (`HETCCL_NCCL_LIBRARY=<NVIDIA NCCL>`,
so HetCCL passes the one-domain communicator through to the same NCCL). The
two alternate per collective, repetition and size range, so that both see
the same machine conditions. Small sizes (< 1 MB) get many iterations, for
stable latencies; each size's result is the best of the repetitions.

Targets (printed, never the exit status): busbw >= 0.99x native from 1 MB
up; latency <= native + 1 us below 64 KB. The exit status is non-zero only
when a run failed (a rank error, a timeout, missing sizes, ranks not on the
GPUs).

Writes a markdown report (machine, commands, tables, raw JSON) to
bench/results/gpu-sweep-<date>.md or --out. Needs only the standard library;
run it with the Python that has PyTorch's NVIDIA wheels (it finds NCCL and
the CUDA runtime there), e.g. /opt/torch/.venv/bin/python3.

Time on 2 H200s: about 5 s per run (start-up, CUDA and NCCL init, 8 GB of
buffers filled) and 1 s of measurement; 5 collectives x 2 libraries x 2
size ranges x 2 repetitions = 40 runs, about 2.5 to 3 minutes.
"""

import argparse
import datetime
import sys
import tempfile
import time
from pathlib import Path

# tests/gpu/run.sh imports find_nvidia_nccl and cuda_runtime_dirs from here.
from bench_common import (REPO, PerfRun, chart_hint, cuda_runtime_dirs,
                          environment_note, find_nvidia_nccl, format_busbw,
                          format_bytes, gpu_machine_facts, json_line, log,
                          log_outcome, parse_size, perf_binary, perf_command,
                          report_path, run_required, summary_section,
                          topology, write_report_file)

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast",
               "alltoall")
LATENCY_BELOW = 64 << 10    # latency target below this size
BANDWIDTH_FROM = 1 << 20    # busbw target from this size up
SMALL_BELOW = 1 << 20       # sizes below use the many-iteration settings
LATENCY_SLACK_US = 1.0
BANDWIDTH_RATIO = 0.99
NATIVE, HETCCL = "native", "hetccl"
TITLES = {NATIVE: "NVIDIA NCCL", HETCCL: "HetCCL"}


# ----------------------------------------------------------------------------
# Formatting.

def format_time(us):
    if us is None:
        return "-"
    return f"{us:.0f}" if us >= 1000 else f"{us:.2f}"


def iteration_pair(text):
    try:
        warmup, iters = (int(x) for x in text.split(","))
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"expected WARMUP,ITERS, got {text}") from error
    return warmup, iters


# ----------------------------------------------------------------------------
# The sweep.

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build-gpu"),
                        help="CMake build with tools/hetccl-perf "
                        "(default: build-gpu)")
    parser.add_argument("--nccl-library",
                        help="NVIDIA's libnccl.so.2 (default: "
                        "HETCCL_NCCL_LIBRARY, else the nvidia-nccl wheel)")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("-b", "--min-bytes", type=parse_size, default=8)
    parser.add_argument("-e", "--max-bytes", type=parse_size,
                        default=4 << 30)
    parser.add_argument("--small-iters", type=iteration_pair,
                        default=(50, 1000), metavar="WARMUP,ITERS",
                        help="below 1 MB (default 50,1000)")
    parser.add_argument("--large-iters", type=iteration_pair,
                        default=(5, 30), metavar="WARMUP,ITERS",
                        help="from 1 MB up (default 5,30)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs of each library per size range; the "
                        "best is kept (default 2)")
    parser.add_argument("--nranks", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60,
                        help="seconds allowed for one hetccl-perf run")
    parser.add_argument("--deadline", type=float,
                        help="seconds after which no further run starts "
                        "(the report is still written)")
    parser.add_argument("--log-dir",
                        help="keep each run's output here (default: a "
                        "temporary directory)")
    parser.add_argument("--out", help="report path (default: "
                        "bench/results/gpu-sweep-<date>.md)")
    return parser.parse_args()


def size_ranges(args):
    """(name, first, last, (warmup, iters)) of the two ranges."""
    ranges = []
    if args.min_bytes < SMALL_BELOW:
        ranges.append(("small", args.min_bytes,
                       min(args.max_bytes, SMALL_BELOW // 2),
                       args.small_iters))
    if args.max_bytes >= SMALL_BELOW:
        ranges.append(("large", max(args.min_bytes, SMALL_BELOW),
                       args.max_bytes, args.large_iters))
    return ranges


def plan_runs(args, exe, nccl_library, workdir, log_dir):
    """Every run, in the order they execute: per collective, repetition and
    size range, the two libraries in alternating order."""
    runs = []
    collectives = [c for c in args.collectives.split(",") if c]
    for ci, collective in enumerate(collectives):
        for rep in range(args.repeats):
            for name, first, last, (warmup, iters) in size_ranges(args):
                order = ((NATIVE, HETCCL) if (ci + rep) % 2 == 0
                         else (HETCCL, NATIVE))
                for impl in order:
                    stem = f"{collective}-{name}-{impl}-r{rep}"
                    json_path = workdir / f"{stem}.jsonl"
                    extra, env = [], {}
                    if impl == NATIVE:
                        extra = ["--nccl-library", nccl_library]
                    else:
                        env = {"HETCCL_NCCL_LIBRARY": nccl_library}
                    command = perf_command(exe, args.nranks, collective,
                                           first, last, warmup, iters,
                                           json_path, args.timeout, extra)
                    run = PerfRun(stem, command, env, json_path,
                                  log_dir / f"sweep-{stem}.log")
                    run.collective, run.impl, run.rep = collective, impl, rep
                    runs.append(run)
    return runs


def best_by_size(runs, collective, impl):
    """bytes -> the record with the shortest time over the repetitions."""
    best = {}
    for run in runs:
        if run.collective != collective or run.impl != impl:
            continue
        for rec in run.records:
            old = best.get(rec["bytes"])
            if old is None or rec["time_us"] < old["time_us"]:
                best[rec["bytes"]] = rec
    return best


def judge(size, native, hetccl):
    """(target text, PASS/FAIL/'-', miss description or None)."""
    if size < LATENCY_BELOW:
        delta = hetccl["time_us"] - native["time_us"]
        ok = delta <= LATENCY_SLACK_US
        miss = None if ok else (f"{format_time(hetccl['time_us'])} us vs "
                                f"{format_time(native['time_us'])} us "
                                f"(+{delta:.2f} us > {LATENCY_SLACK_US} us)")
        return f"time <= native + {LATENCY_SLACK_US:g} us", \
            "PASS" if ok else "FAIL", miss
    if size >= BANDWIDTH_FROM:
        ratio = (hetccl["busbw_GBps"] / native["busbw_GBps"]
                 if native["busbw_GBps"] > 0 else 0.0)
        ok = ratio >= BANDWIDTH_RATIO
        miss = None if ok else (f"busbw {hetccl['busbw_GBps']:.2f} vs "
                                f"{native['busbw_GBps']:.2f} GB/s "
                                f"({ratio:.3f}x < {BANDWIDTH_RATIO}x)")
        return f"busbw >= {BANDWIDTH_RATIO}x", "PASS" if ok else "FAIL", miss
    return "-", "-", None


def collective_table(runs, collective):
    """Markdown table of one collective, the misses, and the size counts."""
    native = best_by_size(runs, collective, NATIVE)
    hetccl = best_by_size(runs, collective, HETCCL)
    lines = [f"### {collective}", "",
             "| size | native us | HetCCL us | native busbw GB/s | "
             "HetCCL busbw GB/s | HetCCL / native busbw | target | result |",
             "|---:|---:|---:|---:|---:|---:|:---|:---|"]
    misses, missing, judged = [], [], 0
    for size in sorted(set(native) | set(hetccl)):
        n, h = native.get(size), hetccl.get(size)
        if n is None or h is None:
            missing.append(size)
            lines.append(f"| {format_bytes(size)} | "
                         f"{format_time(n and n['time_us'])} | "
                         f"{format_time(h and h['time_us'])} | "
                         f"{format_busbw(n and n['busbw_GBps'])} | "
                         f"{format_busbw(h and h['busbw_GBps'])} | - | - | "
                         "MISSING |")
            continue
        ratio = (f"{h['busbw_GBps'] / n['busbw_GBps']:.3f}"
                 if n["busbw_GBps"] > 0 else "-")
        target, result, miss = judge(size, n, h)
        judged += result != "-"
        if miss:
            misses.append(f"{collective} {format_bytes(size)}: {miss}")
        lines.append(f"| {format_bytes(size)} | {format_time(n['time_us'])} | "
                     f"{format_time(h['time_us'])} | "
                     f"{format_busbw(n['busbw_GBps'])} | "
                     f"{format_busbw(h['busbw_GBps'])} | {ratio} | {target} | "
                     f"{result} |")
    return "\n".join(lines) + "\n", misses, missing, judged


def key_numbers(runs, judged, missed):
    """One "KEY ..." line for tests/gpu/run.sh's summary: targets met, and
    all-reduce latency at the smallest size and busbw at the largest."""
    text = f"KEY targets met {judged - missed}/{judged}"
    native = best_by_size(runs, "allreduce", NATIVE)
    hetccl = best_by_size(runs, "allreduce", HETCCL)
    sizes = sorted(set(native) & set(hetccl))
    if sizes:
        low, high = sizes[0], sizes[-1]
        text += (f"; allreduce {format_bytes(low)}B: "
                 f"{format_time(native[low]['time_us'])} vs "
                 f"{format_time(hetccl[low]['time_us'])} us, "
                 f"{format_bytes(high)}B: "
                 f"{format_busbw(native[high]['busbw_GBps'])} vs "
                 f"{format_busbw(hetccl[high]['busbw_GBps'])} GB/s "
                 "(native vs HetCCL)")
    return text


def write_report(path, args, facts, topo, runs, tables, misses, failures,
                 seconds):
    now = datetime.datetime.now().isoformat(timespec="seconds")
    (sw, si), (lw, li) = args.small_iters, args.large_iters
    parts = [
        "# GPU sweep: NVIDIA NCCL vs HetCCL pass-through", "",
        f"Run on {now} by `bench/gpu_sweep.py` in {seconds:.0f} s: "
        f"{args.nranks} GPUs, `hetccl-perf -np {args.nranks}`, float32 "
        "(sum), out of place, no check; native = `--nccl-library` "
        "(NVIDIA's NCCL called directly), HetCCL = the linked HetCCL with "
        "`HETCCL_NCCL_LIBRARY` (one domain: passed through to the same "
        f"NCCL). Below 1 MB: {sw} warm-up and {si} timed iterations; from "
        f"1 MB: {lw} and {li}. Each library ran {args.repeats} time(s) per "
        "size range, alternating with the other; each size shows the best "
        "time (mean of the ranks' per-iteration times) of those runs. busbw "
        "as nccl-tests (GB = 1e9 bytes).", "",
        f"Targets: busbw >= {BANDWIDTH_RATIO}x native from "
        f"{format_bytes(BANDWIDTH_FROM)}; time <= native + "
        f"{LATENCY_SLACK_US:g} us below {format_bytes(LATENCY_BELOW)}.", "",
        "Each library runs in processes of its own here. Below about 1 MB a "
        "launch is limited by the host, and the same library takes up to "
        "3.5 us more per launch in one process than in the next; "
        "`passthrough_overhead` (tests/gpu/run.sh, step overhead) compares "
        "the two libraries inside the same processes.", "",
        "## Summary", ""]
    parts += summary_section(failures, misses,
                             f"Missed targets ({len(misses)}):",
                             "Every run succeeded and every target was met.")
    parts += ["## Machine", ""] + [f"- {k}: {v}" for k, v in facts]
    parts += ["", "```"] + topo + ["```", "", "## Results", ""] + tables
    parts += ["## Commands", "", environment_note(), "", "```"]
    parts += [r.shown for r in runs] + ["```", ""]
    parts += ["## Raw JSON", "", "```"]
    for run in runs:
        parts.append(f"# {run.label}")
        parts += [json_line(rec) for rec in run.records]
    parts += ["```", ""]
    write_report_file(path, parts)
    chart_hint(path)


def main():
    args = parse_args()
    start = time.monotonic()
    exe = perf_binary(args.build_dir)
    nccl_library = find_nvidia_nccl(args.nccl_library)
    if not cuda_runtime_dirs():
        log("warning: no libcudart.so* found in the nvidia wheels or "
            "/usr/local/cuda; hetccl-perf relies on the loader's path")
    facts = gpu_machine_facts(nccl_library)
    topo = topology()
    with tempfile.TemporaryDirectory(prefix="hetccl-gpu-sweep-") as tmp:
        log_dir = Path(args.log_dir) if args.log_dir else Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        runs = plan_runs(args, exe, nccl_library, Path(tmp), log_dir)
        log(f"{len(runs)} runs of hetccl-perf; about 5-6 s each on H200s")
        failures = []
        for run in runs:
            run_required(run, start, args.deadline, args.timeout, 1,
                         args.nranks, failures)
    tables, misses, missing_total, judged_total = [], [], 0, 0
    for collective in [c for c in args.collectives.split(",") if c]:
        table, coll_misses, missing, judged = collective_table(runs, collective)
        tables.append(table)
        misses += coll_misses
        missing_total += len(missing)
        judged_total += judged
        if missing:
            failures.append(f"{collective}: no result of both libraries for "
                            f"{', '.join(format_bytes(s) for s in missing)}")
        log(f"{collective}: {judged - len(coll_misses)}/{judged} targets met"
            + (f", {len(missing)} sizes missing" if missing else ""))
    seconds = time.monotonic() - start
    path = report_path(args.out, "gpu-sweep")
    write_report(path, args, facts, topo, runs, tables, misses, failures,
                 seconds)
    return log_outcome(["\n".join(tables)], misses, failures,
                       key_numbers(runs, judged_total, len(misses)), path,
                       seconds)


if __name__ == "__main__":
    sys.exit(main())
