#!/usr/bin/env python3
"""Compares HetCCL's host all-reduce with OpenMPI's and Gloo's.

Runs hetccl-perf, the OpenMPI peer (under mpirun, shared-memory BTL) and the
Gloo peer (ring, TCP on loopback) for each rank count, with the same sizes and
iteration counts, then writes a markdown report (tables, exact commands,
machine facts, raw JSON) to bench/results/host-allreduce-<date>.md and prints
the tables. A program that is not built is skipped with a message.

Not a test: run it by hand on a quiet machine (see bench/README.md).
"""

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

# compare_hetero_allreduce.py uses REPO, read_json_lines and format_bytes
# from here.
from bench_common import (REPO, chart_hint, cpu_model, first_lines,
                          format_bytes, hetccl_commit, json_line,
                          load_average, read_json_lines, report_path,
                          write_report_file)

IMPLS = ("hetccl", "openmpi", "gloo")
IMPL_TITLES = {"hetccl": "HetCCL", "openmpi": "OpenMPI", "gloo": "Gloo"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build"),
                        help="CMake build directory (default: build)")
    parser.add_argument("--nranks", type=int, nargs="+", default=[2, 4],
                        help="rank counts to compare (default: 2 4)")
    parser.add_argument("-b", "--min-bytes", default="1K")
    parser.add_argument("-e", "--max-bytes", default="256M")
    parser.add_argument("-f", "--factor", type=int, default=2)
    parser.add_argument("-w", "--warmup", type=int, default=5)
    parser.add_argument("-n", "--iters", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=900,
                        help="seconds allowed for each program run")
    parser.add_argument("--out", help="report path (default: "
                        "bench/results/host-allreduce-<date>.md)")
    return parser.parse_args()


def sweep_flags(args, json_path):
    return ["-c", "allreduce", "-b", args.min_bytes, "-e", args.max_bytes,
            "-f", str(args.factor), "-w", str(args.warmup),
            "-n", str(args.iters), "--json", str(json_path)]


def command_for(impl, build, nranks, args, json_path):
    """The command line that runs `impl`, or None with why it can't."""
    flags = sweep_flags(args, json_path)
    if impl == "hetccl":
        exe = build / "tools" / "hetccl-perf"
        # Out-of-place only, as the peers measure it; the check runs once
        # per size, outside the timed loop, as the peers' does.
        return ([str(exe), "-np", str(nranks)] + flags +
                ["-d", "float32", "--placement", "out", "--check", "1"], exe)
    if impl == "openmpi":
        exe = build / "bench" / "peer-mpi-allreduce"
        # vader is OpenMPI's shared-memory transport; --bind-to none because
        # the other programs do not pin their ranks either.
        mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe",
                  "--bind-to", "none", "-np", str(nranks),
                  "--mca", "btl", "self,vader"]
        return (mpirun + [str(exe)] + flags, exe)
    exe = build / "bench" / "peer-gloo-allreduce"
    return ([str(exe), "-np", str(nranks)] + flags, exe)


def run_impl(impl, build, nranks, args, workdir):
    """Runs one program; returns (command string, JSON records)."""
    json_path = workdir / f"{impl}-np{nranks}.jsonl"
    command, exe = command_for(impl, build, nranks, args, json_path)
    shown = shlex.join(command)
    if not exe.exists():
        print(f"== skip {impl} np={nranks}: {exe} is not built "
              f"(ninja -C {build} {exe.name})", flush=True)
        return shown, []
    print(f"== {impl} np={nranks}: {shown}", flush=True)
    try:
        proc = subprocess.run(command, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"!! {impl} np={nranks} timed out after {args.timeout}s",
              flush=True)
        return shown, []
    if proc.returncode != 0:
        print(f"!! {impl} np={nranks} exited {proc.returncode}", flush=True)
    return shown, read_json_lines(json_path)


def format_time(us):
    if us is None:
        return "-"
    return f"{us:.0f}" if us >= 100 else f"{us:.2f}"


def markdown_table(nranks, records):
    """One row per size: busbw of each, HetCCL/best peer, latencies."""
    by_size = {}
    for rec in records:
        if rec.get("nranks") == nranks and rec.get("coll") == "allreduce":
            by_size.setdefault(rec["bytes"], {})[rec["impl"]] = rec
    header = (["size"] + [f"{IMPL_TITLES[i]} busbw GB/s" for i in IMPLS] +
              ["HetCCL / best peer"] +
              [f"{IMPL_TITLES[i]} time us" for i in IMPLS])
    lines = [f"### {nranks} ranks", "",
             "| " + " | ".join(header) + " |",
             "|" + "---:|" * len(header)]
    for size in sorted(by_size):
        row = by_size[size]
        busbw = [row[i]["busbw_GBps"] if i in row else None for i in IMPLS]
        times = [row[i]["time_us"] if i in row else None for i in IMPLS]
        peers = [b for b in busbw[1:] if b]
        ratio = (f"{busbw[0] / max(peers):.2f}"
                 if busbw[0] is not None and peers else "-")
        cells = ([format_bytes(size)] +
                 [f"{b:.3g}" if b is not None else "-" for b in busbw] +
                 [ratio] +
                 [format_time(t) for t in times])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def memory_total():
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                kib = int(line.split()[1])
                return f"{kib / (1 << 20):.1f} GiB"
    except OSError:
        pass
    return "unknown"


def machine_facts():
    return [
        ("nproc", str(len(os.sched_getaffinity(0)))),
        ("CPU", cpu_model()),
        ("memory", memory_total()),
        ("kernel", platform.release()),
        ("load average at start", load_average()),
        ("OpenMPI", first_lines(["mpirun", "--version"])[0]),
        ("Gloo (Debian libgloo-dev)", first_lines(
            ["dpkg-query", "-W", "-f=${Version}", "libgloo-dev"])[0]),
        ("compiler", first_lines(["c++", "--version"])[0]),
        ("HetCCL commit", hetccl_commit()),
    ]


def write_report(path, args, facts, commands, records, tables):
    parts = [
        "# Host all-reduce: HetCCL vs OpenMPI vs Gloo", "",
        f"Run on {datetime.datetime.now().isoformat(timespec='seconds')} "
        f"by `bench/compare_host_allreduce.py`: float32 sum, out of place, "
        f"{args.min_bytes} to {args.max_bytes} (x{args.factor}), "
        f"{args.warmup} warm-up and {args.iters} timed iterations per size; "
        "time is the mean per iteration, the maximum over ranks; "
        "busbw = algbw * 2(n-1)/n, GB = 1e9 bytes.", "",
        "## Machine", "",
    ]
    parts += [f"- {name}: {value}" for name, value in facts]
    parts += ["", "## Results", ""] + tables
    parts += ["## Commands", "", "```"] + commands + ["```", "",
              "## Raw JSON", "", "```"]
    parts += [json_line(rec) for rec in records]
    parts += ["```", ""]
    write_report_file(path, parts)
    chart_hint(path)


def main():
    args = parse_args()
    build = Path(args.build_dir).resolve()
    facts = machine_facts()
    commands, records = [], []
    with tempfile.TemporaryDirectory(prefix="hetccl-compare-") as tmp:
        for nranks in args.nranks:
            for impl in IMPLS:
                shown, recs = run_impl(impl, build, nranks, args, Path(tmp))
                commands.append(shown)
                records += recs
    if not records:
        print("no results: build the programs first (see bench/README.md)",
              file=sys.stderr)
        return 1
    tables = [markdown_table(n, records) for n in args.nranks]
    path = report_path(args.out, "host-allreduce")
    write_report(path, args, facts, commands, records, tables)
    print()
    print("\n".join(tables))
    print(f"report written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
