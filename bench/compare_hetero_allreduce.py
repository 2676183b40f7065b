#!/usr/bin/env python3
"""Compares HetCCL's heterogeneous all-reduce with its homogeneous one.

Runs hetccl-perf twice in one go on the same N CPU ranks: once as one domain,
once forced into domains (default: 2 domains, HETCCL_DOMAINS=split:2), then
writes a markdown report (table with the ratio, exact commands, machine facts,
raw JSON) to bench/results/hetero-allreduce-<date>.md and prints the table.
The issue's target: heterogeneous at least 0.7x homogeneous bus bandwidth
from 16 MB up.

Not a test: run it by hand on a quiet machine (see bench/README.md).
"""

import argparse
import datetime
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import compare_host_allreduce as common
from bench_common import chart_hint

REPO = common.REPO


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build"))
    parser.add_argument("--nranks", type=int, default=4)
    parser.add_argument("--domains", default="split:2",
                        help="HETCCL_DOMAINS for the heterogeneous run")
    parser.add_argument("-b", "--min-bytes", default="1M")
    parser.add_argument("-e", "--max-bytes", default="256M")
    parser.add_argument("-f", "--factor", type=int, default=4)
    parser.add_argument("-w", "--warmup", type=int, default=3)
    parser.add_argument("-n", "--iters", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--out")
    return parser.parse_args()


def run(build, args, domains, json_path):
    command = [str(build / "tools" / "hetccl-perf"), "-np", str(args.nranks),
               "-x", "allreduce", "-d", "float32", "--placement", "out",
               "--check", "1", "-b", args.min_bytes, "-e", args.max_bytes,
               "-f", str(args.factor), "-w", str(args.warmup),
               "-n", str(args.iters), "--json", str(json_path),
               "--timeout", str(args.timeout)]
    if domains:
        command += ["-D", domains]
    print("$ " + shlex.join(command), flush=True)
    subprocess.run(command, check=True, timeout=args.timeout + 60)
    return shlex.join(command), common.read_json_lines(json_path)


def table(homogeneous, heterogeneous, domains):
    homo = {r["bytes"]: r for r in homogeneous}
    lines = ["| size | one domain busbw GB/s | "
             f"{domains} busbw GB/s | ratio | one domain time us | "
             f"{domains} time us |", "|---:|---:|---:|---:|---:|---:|"]
    for rec in heterogeneous:
        base = homo.get(rec["bytes"])
        if base is None:
            continue
        ratio = rec["busbw_GBps"] / base["busbw_GBps"]
        lines.append(
            f"| {common.format_bytes(rec['bytes'])} | "
            f"{base['busbw_GBps']:.3g} | {rec['busbw_GBps']:.3g} | "
            f"{ratio:.2f} | {common.format_time(base['time_us'])} | "
            f"{common.format_time(rec['time_us'])} |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    build = Path(args.build_dir).resolve()
    facts = common.machine_facts()
    with tempfile.TemporaryDirectory() as tmp:
        homo_cmd, homo = run(build, args, None, Path(tmp) / "homo.jsonl")
        het_cmd, het = run(build, args, args.domains, Path(tmp) / "het.jsonl")
    result = table(homo, het, args.domains)
    print(result)
    path = Path(args.out) if args.out else (
        REPO / "bench" / "results" /
        f"hetero-allreduce-{datetime.date.today().isoformat()}.md")
    parts = ["# Heterogeneous vs homogeneous all-reduce", "",
             f"Run on {datetime.datetime.now().isoformat(timespec='seconds')}"
             f" by `bench/compare_hetero_allreduce.py`: {args.nranks} CPU "
             f"ranks, float32 sum, out of place; the same ranks as one "
             f"domain and as `HETCCL_DOMAINS={args.domains}`.", "",
             "## Machine", ""]
    parts += [f"- {name}: {value}" for name, value in facts]
    parts += ["", "## Results", "", result, "## Commands", "", "```",
              homo_cmd, het_cmd, "```", "", "## Raw JSON", "", "```"]
    parts += [json.dumps(r, separators=(",", ":")) for r in homo + het]
    parts += ["```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    chart_hint(path)
    print(f"report written to {path}")


if __name__ == "__main__":
    sys.exit(main())
