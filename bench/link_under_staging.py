#!/usr/bin/env python3
"""The tcp link between pretend hosts, alone and beside the copies that the
staged GPU engine or a CPU rank's own work adds, on one machine.

Between two pretend hosts of one machine, a link over loopback copies
every byte twice in the kernel (into the socket and out of it), and the
staged GPU engine adds a copy from the GPU into pinned host memory before
each send and one back after each receive. Between real hosts those land
on two machines' memory and a NIC; on one machine they all share its
memory and the one GPU's PCIe link. This measures what that sharing costs
the link: `link-bandwidth --two-way` alone, then while another process
copies host<->GPU at the rate the staged engine's copies need (both ranks
stage what they send and receive: 2 x the link's rate each way), in
alternating rounds, and the copies alone for 2 s each round (what they
reach without the link). The ratio is a ceiling of the staged path on
this layout that is the machine's, not HetCCL's.

With --load host the copies are a CPU rank's instead: two processes (one
per pretend host) each copy host memory to host memory with 4 threads (a
CPU rank's memory helpers), 2 MiB a copy over 128 MiB buffers, as an
all-gather out of place copies its own block into the output while the
other block crosses (at the link's rate, once per rank); it needs no
PyTorch and no GPU.

    python3 bench/link_under_staging.py [--build-dir build-gpu]
        [--sizes 64M,256M] [--rounds 3] [--load staging|host]
        [--copy-rate GBPS] [--link-bytes 4G]

--copy-rate: GB/s of the copies, each way for staging, per process for
host (default: the two-way link of the first round alone, twice that for
staging). The staging load needs PyTorch with CUDA. --link-bytes: what
each link run moves per size.
"""

import argparse
import ctypes
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_common import (REPO, cpu_model, die, environment_note, first_lines,
                          format_bytes, hetccl_commit, link_bandwidth,
                          load_average, log, parse_size, report_path,
                          write_report_file)

PIECE = 4 << 20  # bytes per copy, the staged engine's largest piece
HOST_PIECE = 8 << 20  # bytes per round of the host copies: a chunk's block
HOST_SPAN = 128 << 20  # host buffers larger than the caches
HOST_THREADS = 4  # a CPU rank's memory helpers


def staging_load(rate_gbps, report_path_):
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
        {"GBps": copies * PIECE / seconds / 1e9, "seconds": seconds}))


def host_load(rate_gbps, report_path_):
    """Copies host memory to host memory with HOST_THREADS threads until
    SIGTERM, each over its own part of the buffers, HOST_PIECE /
    HOST_THREADS bytes a copy, paced to its share of `rate_gbps`
    (ctypes.memmove lets go of the GIL); then writes the rate reached."""
    source = ctypes.create_string_buffer(HOST_SPAN)
    target = ctypes.create_string_buffer(HOST_SPAN)
    ctypes.memset(source, 7, HOST_SPAN)  # touched, as a rank's input is
    ctypes.memset(target, 0, HOST_SPAN)
    region = HOST_SPAN // HOST_THREADS
    piece = HOST_PIECE // HOST_THREADS
    stop = threading.Event()
    copied = [0] * HOST_THREADS

    def copy_share(index):
        base_in = ctypes.addressof(source) + index * region
        base_out = ctypes.addressof(target) + index * region
        start = time.monotonic()
        while not stop.is_set():
            offset = copied[index] * piece % region
            ctypes.memmove(base_out + offset, base_in + offset, piece)
            copied[index] += 1
            due = start + copied[index] * piece * HOST_THREADS / (
                rate_gbps * 1e9)
            time.sleep(max(0.0, due - time.monotonic()))

    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threads = [threading.Thread(target=copy_share, args=(i,))
               for i in range(HOST_THREADS)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    print("ready", flush=True)
    while not stop.wait(0.05):
        pass
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - start
    Path(report_path_).write_text(json.dumps(
        {"GBps": sum(copied) * piece / seconds / 1e9, "seconds": seconds}))


LOADS = {"staging": (staging_load, 1), "host": (host_load, 2)}


def start_load(kind, rate, log_dir, label):
    """Starts the load's processes; returns [(process, result path)]."""
    started = []
    for number in range(LOADS[kind][1]):
        result = Path(log_dir) / f"{label}-copies{number}.json"
        process = subprocess.Popen(
            [sys.executable, __file__, "--copy-load", kind, str(rate),
             str(result)], stdout=subprocess.PIPE, text=True)
        started.append((process, result))
        if process.stdout.readline().strip() != "ready":
            stop_load(started)
            hint = " (is PyTorch with CUDA there?)" if kind == "staging" else ""
            die(f"the {kind} copy load did not start{hint}")
    return started


def stop_load(started):
    """Stops the load; the rate its processes reached, per process."""
    for process, _ in started:
        process.send_signal(signal.SIGTERM)
    rates = []
    for process, result in started:
        process.wait(timeout=30)
        if result.is_file():
            rates.append(json.loads(result.read_text())["GBps"])
    return statistics.mean(rates) if rates else 0.0


def measure(args, sizes, log_dir, label, rate):
    """The two-way link per size, with the copy load running when `rate`."""
    load = start_load(args.kind, rate, log_dir, label) if rate else None
    try:
        figures, command = link_bandwidth(
            args.build_dir, "tcp", sizes, log_dir / f"{label}.json",
            log_dir / f"{label}.log", args.timeout, total=args.link_bytes)
    finally:
        copied = stop_load(load) if load else None
    if not figures:
        die(f"link-bandwidth failed; see {log_dir}/{label}.log")
    return figures, command, copied


def load_alone(kind, rate, log_dir, label, seconds=2.0):
    """The rate the copy load reaches with no link beside it."""
    load = start_load(kind, rate, log_dir, label)
    time.sleep(seconds)
    return stop_load(load)


def report(args, sizes, rounds, rate, command):
    lines = [
        "# The tcp link between pretend hosts, alone and beside "
        + ("the staging copies" if args.kind == "staging" else
           "a CPU rank's own copies"),
        "",
        f"- date: {time.strftime('%Y-%m-%dT%H:%M:%S')}",
        f"- CPU: {cpu_model()}, {os.cpu_count()} cores available",
        f"- GPUs: {first_lines(['nvidia-smi', '-L'])[0]}",
        f"- HetCCL commit: {hetccl_commit()}",
        f"- load average at start: {args.load}",
        f"- copies: {load_text(args.kind, rate)}",
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
    copied = " / ".join(f"{r['copies alone']:.1f} / {r['copied']:.1f}"
                        for r in rounds)
    per = "each way" if args.kind == "staging" else "per process"
    lines += ["", f"Copy rates reached, alone / beside the link (GB/s {per}, "
              f"per round): {copied}", ""]
    return lines


def load_text(kind, rate):
    if kind == "staging":
        return (f"host->GPU and GPU->host at once, {format_bytes(PIECE)} "
                f"each, paced to {rate:.1f} GB/s each way (PyTorch, pinned "
                "memory, another process)")
    return (f"host to host in two processes, {HOST_THREADS} threads each, "
            f"{format_bytes(HOST_PIECE // HOST_THREADS)} a copy over "
            f"{format_bytes(HOST_SPAN)} buffers, paced to {rate:.1f} GB/s "
            "per process")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--copy-load":
        LOADS[sys.argv[2]][0](float(sys.argv[3]), sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build-gpu"))
    parser.add_argument("--sizes", default="64M,256M")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load", dest="kind", choices=sorted(LOADS),
                        default="staging")
    parser.add_argument("--copy-rate", type=float, default=None)
    parser.add_argument("--link-bytes", default="4G")
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
        for phase in order:
            if phase == "loaded" and rate is None:
                rate = min(entry["alone"].values())
                rate *= 2 if args.kind == "staging" else 1
            figures, command, copied = measure(
                args, sizes, log_dir, f"{phase}-r{number}",
                rate if phase == "loaded" else None)
            entry[phase] = figures
            if copied is not None:
                entry["copied"] = copied
                entry["copies alone"] = load_alone(
                    args.kind, rate, log_dir, f"copies-alone-r{number}")
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
