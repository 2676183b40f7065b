#!/usr/bin/env python3
"""The tcp link between pretend hosts, alone and beside the copies that the
staged GPU engine adds, on one machine.

Between two pretend hosts of one machine, a link over loopback copies
every byte twice in the kernel (into the socket and out of it), and the
staged GPU engine adds a copy from the GPU into pinned host memory before
each send and one back after each receive. Between real hosts those land
on two machines' memory and a NIC; on one machine they all share its
memory and the one GPU's PCIe link. This measures what that sharing costs
the link: `link-bandwidth --two-way` alone, then while another process
copies host<->GPU at the rate the staged engine's copies need (both ranks
stage what they send and receive: 2 x the link's rate each way), in
alternating rounds. The ratio is a ceiling of the staged path on this
layout that is the machine's, not HetCCL's.

    python3 bench/link_under_staging.py [--build-dir build-gpu]
        [--sizes 64M,256M] [--rounds 3] [--copy-rate GBPS]

--copy-rate: GB/s each way of the copies (default: twice the two-way link
of the first round alone). Needs PyTorch with CUDA for the copies.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import (REPO, cpu_model, die, environment_note, first_lines,
                          format_bytes, hetccl_commit, link_bandwidth,
                          load_average, log, parse_size, report_path,
                          write_report_file)

PIECE = 4 << 20  # bytes per copy, the staged engine's largest piece


def copy_load(rate_gbps, report_path_):
    """Copies host->GPU and GPU->host at once, each paced to `rate_gbps`,
    until SIGTERM; then writes the rates reached to `report_path_`."""
    import torch  # pylint: disable=import-outside-toplevel
    host_out = torch.empty(PIECE, dtype=torch.uint8, pin_memory=True)
    host_in = torch.empty(PIECE, dtype=torch.uint8, pin_memory=True)
    device_in = torch.empty(PIECE, dtype=torch.uint8, device="cuda")
    device_out = torch.empty(PIECE, dtype=torch.uint8, device="cuda")
    up, down = torch.cuda.Stream(), torch.cuda.Stream()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    start = time.monotonic()
    copies = 0
    print("ready", flush=True)
    while not stop:
        with torch.cuda.stream(up):
            host_in.copy_(device_out, non_blocking=True)
        with torch.cuda.stream(down):
            device_in.copy_(host_out, non_blocking=True)
        torch.cuda.synchronize()
        copies += 1
        due = start + copies * PIECE / (rate_gbps * 1e9)
        time.sleep(max(0.0, due - time.monotonic()))
    seconds = time.monotonic() - start
    Path(report_path_).write_text(json.dumps(
        {"GBps_each_way": copies * PIECE / seconds / 1e9, "seconds": seconds}))


def start_load(rate, log_dir, label):
    result = Path(log_dir) / f"{label}-copies.json"
    process = subprocess.Popen(
        [sys.executable, __file__, "--copy-load", str(rate), str(result)],
        stdout=subprocess.PIPE, text=True)
    if process.stdout.readline().strip() != "ready":
        process.wait()
        die("the copy load did not start (is PyTorch with CUDA there?)")
    return process, result


def stop_load(process, result):
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    return json.loads(result.read_text())["GBps_each_way"]


def measure(args, sizes, log_dir, label, rate):
    """The two-way link per size, with the copy load running when `rate`."""
    load = start_load(rate, log_dir, label) if rate else None
    try:
        figures, command = link_bandwidth(
            args.build_dir, "tcp", sizes, log_dir / f"{label}.json",
            log_dir / f"{label}.log", args.timeout)
    finally:
        copied = stop_load(*load) if load else None
    if not figures:
        die(f"link-bandwidth failed; see {log_dir}/{label}.log")
    return figures, command, copied


def report(args, sizes, rounds, rate, command):
    lines = [
        "# The tcp link between pretend hosts, alone and beside the staging "
        "copies",
        "",
        f"- date: {time.strftime('%Y-%m-%dT%H:%M:%S')}",
        f"- CPU: {cpu_model()}, {os.cpu_count()} cores available",
        f"- GPUs: {first_lines(['nvidia-smi', '-L'])[0]}",
        f"- HetCCL commit: {hetccl_commit()}",
        f"- load average at start: {args.load}",
        f"- copies: host->GPU and GPU->host at once, {format_bytes(PIECE)} "
        f"each, paced to {rate:.1f} GB/s each way (PyTorch, pinned memory, "
        "another process)",
        "",
        f"Command: `python3 bench/link_under_staging.py {' '.join(args.argv)}`;"
        f" the link: `{command}`. {environment_note()}",
        "",
        "Two-way link GB/s each way per round, alone / beside the copies, "
        "then the ratio of the medians:",
        "",
        "| size | alone | beside the copies | ratio |",
        "| ---: | --- | --- | ---: |",
    ]
    for size in sizes:
        alone = [r["alone"][size] for r in rounds]
        loaded = [r["loaded"][size] for r in rounds]
        ratio = statistics.median(loaded) / statistics.median(alone)
        lines.append(
            f"| {format_bytes(size)} | {' / '.join(f'{v:.2f}' for v in alone)}"
            f" | {' / '.join(f'{v:.2f}' for v in loaded)} | "
            f"**{ratio:.2f}x** |")
    copied = " / ".join(f"{r['copied']:.1f}" for r in rounds)
    lines += ["", f"Copy rates reached (GB/s each way, per round): {copied}",
              ""]
    return lines


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--copy-load":
        copy_load(float(sys.argv[2]), sys.argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build-gpu"))
    parser.add_argument("--sizes", default="64M,256M")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--copy-rate", type=float, default=None)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--log-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    args.argv = sys.argv[1:]
    args.load = load_average()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="link-staging-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    rate = args.copy_rate
    rounds = []
    command = ""
    for number in range(1, args.rounds + 1):
        entry = {}
        # Alternating order, so that a drift of the machine favours neither.
        order = ["alone", "loaded"] if number % 2 else ["loaded", "alone"]
        if rate is None:
            order = ["alone", "loaded"]
        for kind in order:
            if kind == "loaded" and rate is None:
                rate = 2 * min(entry["alone"].values())
            figures, command, copied = measure(
                args, sizes, log_dir, f"{kind}-r{number}",
                rate if kind == "loaded" else None)
            entry[kind] = figures
            if copied is not None:
                entry["copied"] = copied
        rounds.append(entry)
        log(f"round {number}: " + json.dumps(entry))
    lines = report(args, sizes, rounds, rate, command)
    path = report_path(args.out, "link-under-staging")
    write_report_file(path, lines)
    log("\n".join(lines))
    log(f"report written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
