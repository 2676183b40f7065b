#!/usr/bin/env python3
"""Heterogeneous all-reduce on 2 GPUs forced into 2 domains, beside its peers.

In one run, for float32 sum from 1 MB to 1 GB (x2):

- HetCCL: `hetccl-perf -np 2 -D split:2 -x allreduce --placement out`, each
  GPU its own domain, so every byte crosses HetCCL's transport
  (HETCCL_TRANSPORT=shm by default; --transport tcp or both);
- NVIDIA's NCCL through host memory: the same tool with `--nccl-library`
  and NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 (its SHM transport), the fair
  peer of HetCCL's shm path;
- NVIDIA's NCCL as it is (NVLink), the ceiling;
- PyTorch's Gloo backend on CUDA tensors (under torchrun; Gloo copies to the
  host and reduces there), what a job without a cross-vendor library gets;
- pinned host copy bandwidth, device to host and host to device, on each
  GPU alone: the bound of any path through host memory.

The table gives busbw (nccl-tests' definition, GB = 1e9 bytes), the ratio
HetCCL / NCCL host path, and PASS/FAIL against the target "HetCCL busbw >=
45 GB/s from 256 MB" (for the first transport measured). The exit status is
non-zero only when a run failed; a missed target is printed.

Writes a markdown report (machine, commands, tables, raw numbers) to
bench/results/gpu-hetero-allreduce-<date>.md or --out. Run it with the
Python of PyTorch (for Gloo; e.g. /opt/torch/.venv/bin/python3). About a
minute on 2 H200s: three hetccl-perf runs (four with --transport both) of
5-15 s each, and the torchrun of Gloo and the copies, 20-40 s.
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common as common  # noqa: E402  (the shared helpers, beside us)

TARGET_GBPS = 45.0
TARGET_FROM = 256 << 20
GLOO_BYTES_PER_SIZE = 512 << 20  # Gloo runs about this many bytes per size
COPY_BYTES_PER_SIZE = 4 << 30


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(common.REPO / "build-gpu"))
    parser.add_argument("--nccl-library",
                        help="NVIDIA's libnccl.so.2 (default: "
                        "HETCCL_NCCL_LIBRARY, else the nvidia-nccl wheel)")
    parser.add_argument("-b", "--min-bytes", type=common.parse_size,
                        default=1 << 20)
    parser.add_argument("-e", "--max-bytes", type=common.parse_size,
                        default=1 << 30)
    parser.add_argument("-w", "--warmup", type=int, default=3)
    parser.add_argument("-n", "--iters", type=int, default=10)
    parser.add_argument("--transport", choices=("shm", "tcp", "both"),
                        default="shm", help="HETCCL_TRANSPORT of the HetCCL "
                        "run (both: shm, then tcp)")
    parser.add_argument("--check", type=int, default=0,
                        help="hetccl-perf --check for HetCCL (default 0: "
                        "timing only; tests/gpu/run.sh checks correctness)")
    parser.add_argument("--skip-gloo", action="store_true",
                        help="no Gloo run and no copy bandwidth (no PyTorch)")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds allowed for one run")
    parser.add_argument("--deadline", type=float,
                        help="seconds after which no further run starts "
                        "(the report is still written)")
    parser.add_argument("--log-dir")
    parser.add_argument("--out", help="report path (default: bench/results/"
                        "gpu-hetero-allreduce-<date>.md)")
    # The Gloo and copy measurement, run by this script under torchrun.
    parser.add_argument("--torch-worker", metavar="RESULT_JSON",
                        help=argparse.SUPPRESS)
    return parser.parse_args()


def sweep_sizes(args):
    sizes, size = [], args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


# ----------------------------------------------------------------------------
# The torchrun worker: Gloo all-reduce of CUDA tensors and pinned copies.

def gloo_iterations(size):
    return max(2, min(20, GLOO_BYTES_PER_SIZE // size))


def copy_iterations(size):
    return max(3, min(50, COPY_BYTES_PER_SIZE // size))


def time_gloo(torch, dist, size, world):
    x = torch.zeros(size // 4, device="cuda")  # zeros: sums stay finite
    dist.all_reduce(x)  # warm-up
    torch.cuda.synchronize()
    dist.barrier()
    iters = gloo_iterations(size)
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    seconds = torch.tensor([(time.perf_counter() - start) / iters])
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)  # the slowest rank
    t = seconds.item()
    return {"bytes": size, "iters": iters, "time_us": t * 1e6,
            "busbw_GBps": size / t * 2 * (world - 1) / world / 1e9}


def time_copies(torch, device_buffer, host_buffer, size):
    """GB/s of device-to-host and host-to-device copies of `size` bytes."""
    dev, host = device_buffer[:size], host_buffer[:size]
    iters = copy_iterations(size)
    result = {"bytes": size, "iters": iters}
    for name, dst, src in (("d2h_GBps", host, dev), ("h2d_GBps", dev, host)):
        dst.copy_(src, non_blocking=True)  # warm-up
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dst.copy_(src, non_blocking=True)
        end.record()
        end.synchronize()
        result[name] = size * iters / (start.elapsed_time(end) / 1e3) / 1e9
    return result


def torch_worker(args):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    sizes = sweep_sizes(args)
    gloo = [time_gloo(torch, dist, size, world) for size in sizes]
    # Copies: one GPU at a time, so that each measures its own link alone.
    device_buffer = torch.empty(max(sizes), dtype=torch.uint8, device="cuda")
    host_buffer = torch.empty(max(sizes), dtype=torch.uint8, pin_memory=True)
    copies = []
    for turn in range(world):
        dist.barrier()
        if turn == rank:
            copies = [time_copies(torch, device_buffer, host_buffer, size)
                      for size in sizes]
    dist.barrier()
    gathered = [None] * world
    dist.all_gather_object(gathered, {"gpu": local_rank, "copies": copies})
    if rank == 0:
        Path(args.torch_worker).write_text(json.dumps({
            "torch": torch.__version__, "gloo": gloo, "copies": gathered}))
    dist.destroy_process_group()
    return 0


class TorchRun:
    """The torchrun of this script's worker, with the attributes of a
    common.PerfRun that the report uses."""

    def __init__(self, args, result_path, log_path):
        self.label = "gloo-and-copies"
        self.command = [sys.executable, "-m", "torch.distributed.run",
                        "--standalone", "--nproc_per_node", "2",
                        str(Path(__file__).resolve()),
                        "--torch-worker", str(result_path),
                        "-b", str(args.min_bytes), "-e", str(args.max_bytes)]
        self.env_changes = ({} if os.environ.get("GLOO_SOCKET_IFNAME")
                            else {"GLOO_SOCKET_IFNAME": "lo"})
        self.result_path = result_path
        self.log_path = log_path
        self.result = None
        self.error = None
        self.seconds = 0.0

    @property
    def shown(self):
        return common.shown_command(self.command, self.env_changes)

    def run(self, timeout):
        common.log(f"$ {self.shown}")
        start = time.monotonic()
        code = common.run_logged(self.command,
                                 common.tool_environment(self.env_changes),
                                 self.log_path, timeout)
        self.seconds = time.monotonic() - start
        if code == 0 and self.result_path.exists():
            self.result = json.loads(self.result_path.read_text())
        else:
            tail = "\n".join(Path(self.log_path).read_text(
                errors="replace").splitlines()[-8:])
            self.error = (f"{self.label}: exit status {code} after "
                          f"{self.seconds:.0f} s (log {self.log_path})\n{tail}")
        common.log(f"  {self.label}: exit {code}, {self.seconds:.1f} s")
        return self


# ----------------------------------------------------------------------------
# The comparison.

def plan_perf_runs(args, exe, nccl_library, workdir, log_dir):
    """(key, title, PerfRun, expected ndomains) of every hetccl-perf run."""
    transports = ["shm", "tcp"] if args.transport == "both" else [
        args.transport]
    plans = []

    def add(key, title, extra, env, ndomains, check=0):
        json_path = workdir / f"{key}.jsonl"
        command = common.perf_command(exe, 2, "allreduce", args.min_bytes,
                                      args.max_bytes, args.warmup, args.iters,
                                      json_path, args.timeout, extra)
        command[command.index("--check") + 1] = str(check)
        run = common.PerfRun(key, command, env, json_path,
                             log_dir / f"hetero-{key}.log")
        plans.append((key, title, run, ndomains))

    for transport in transports:
        add(f"hetccl-{transport}", f"HetCCL 2 domains ({transport}) busbw",
            ["-D", "split:2"],
            {"HETCCL_NCCL_LIBRARY": nccl_library,
             "HETCCL_TRANSPORT": transport}, 2, args.check)
    # NCCL_DEBUG=INFO with the INIT subsystem names the transport NCCL
    # chose ("via SHM", "via P2P"), which the report quotes.
    nccl_debug = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT"}
    add("nccl-host", "NCCL host path busbw",
        ["--nccl-library", nccl_library],
        dict(nccl_debug, NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="0"), 1)
    add("nccl-nvlink", "NCCL NVLink busbw", ["--nccl-library", nccl_library],
        dict(nccl_debug, NCCL_P2P_DISABLE=None, NCCL_SHM_DISABLE=None), 1)
    return plans


def nccl_transports(run):
    """The NCCL transports named in a run's log ("SHM", "P2P/CUMEM", ...)."""
    seen = set()
    for line in Path(run.log_path).read_text(errors="replace").splitlines():
        if " via " in line:
            seen.add(line.split(" via ", 1)[1].split()[0])
    return ", ".join(sorted(seen)) or "not logged"


def by_size(records):
    return {rec["bytes"]: rec for rec in records}


def main_table(args, plans, torch_result):
    """The markdown table, the misses of the target, and the rows."""
    keys = [key for key, _, _, _ in plans]
    results = {key: by_size(run.records) for key, _, run, _ in plans}
    gloo = by_size(torch_result["gloo"]) if torch_result else {}
    copies = {}
    if torch_result:
        for gpu in torch_result["copies"]:
            for rec in gpu["copies"]:
                low = min(rec["d2h_GBps"], rec["h2d_GBps"])
                copies[rec["bytes"]] = min(copies.get(rec["bytes"], low), low)
    primary = keys[0]
    header = [title for _, title, _, _ in plans] + [
        "Gloo (CUDA tensors) busbw", "pinned copy GB/s (slowest GPU and "
        "direction)", f"{primary} / nccl-host",
        f"target: {primary} >= {TARGET_GBPS:g} GB/s from "
        f"{common.format_bytes(TARGET_FROM)}"]
    lines = ["| size | " + " | ".join(header) + " |",
             "|---:|" + "---:|" * (len(header) - 1) + ":---|"]
    misses = []
    for size in sweep_sizes(args):
        busbw = [results[k].get(size, {}).get("busbw_GBps") for k in keys]
        host = results["nccl-host"].get(size, {}).get("busbw_GBps")
        mine = busbw[0]
        ratio = f"{mine / host:.2f}" if mine and host else "-"
        verdict = "-"
        if size >= TARGET_FROM:
            verdict = "PASS" if mine is not None and mine >= TARGET_GBPS \
                else "FAIL"
            if verdict == "FAIL":
                misses.append(f"{primary} {common.format_bytes(size)}: busbw "
                              f"{common.format_busbw(mine)} GB/s < "
                              f"{TARGET_GBPS:g}")
        cells = ([common.format_bytes(size)] +
                 [common.format_busbw(b) for b in busbw] +
                 [common.format_busbw(gloo.get(size, {}).get("busbw_GBps")),
                  common.format_busbw(copies.get(size)), ratio, verdict])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", misses


def key_numbers(args, plans, torch_result):
    """One "KEY ..." line for tests/gpu/run.sh's summary: busbw of each at
    the largest size."""
    size = sweep_sizes(args)[-1]
    parts = []
    for key, _, run, _ in plans:
        value = by_size(run.records).get(size, {}).get("busbw_GBps")
        parts.append(f"{key} {common.format_busbw(value)}")
    if torch_result:
        value = by_size(torch_result["gloo"]).get(size, {}).get("busbw_GBps")
        parts.append(f"gloo {common.format_busbw(value)}")
    return (f"KEY busbw GB/s at {common.format_bytes(size)}: "
            + ", ".join(parts))


def copy_table(torch_result):
    if not torch_result:
        return "Not measured (--skip-gloo or the torch run failed).\n"
    gpus = torch_result["copies"]
    header = []
    for gpu in gpus:
        header += [f"GPU {gpu['gpu']} D2H GB/s", f"GPU {gpu['gpu']} H2D GB/s"]
    lines = ["| size | " + " | ".join(header) + " |",
             "|---:|" + "---:|" * len(header)]
    sizes = [rec["bytes"] for rec in gpus[0]["copies"]]
    for i, size in enumerate(sizes):
        cells = [common.format_bytes(size)]
        for gpu in gpus:
            rec = gpu["copies"][i]
            cells += [f"{rec['d2h_GBps']:.1f}", f"{rec['h2d_GBps']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(path, args, facts, topo, plans, torch_run, table, copies,
                 misses, failures, seconds):
    now = datetime.datetime.now().isoformat(timespec="seconds")
    parts = [
        "# Heterogeneous all-reduce on 2 GPUs: HetCCL beside NCCL and Gloo",
        "",
        f"Run on {now} by `bench/gpu_hetero_allreduce.py` in {seconds:.0f} s:"
        f" float32 sum, out of place, {common.format_bytes(args.min_bytes)} "
        f"to {common.format_bytes(args.max_bytes)} (x2); hetccl-perf with "
        f"{args.warmup} warm-up and {args.iters} timed iterations (time: "
        "mean of the ranks); Gloo: 1 warm-up and "
        f"{gloo_iterations(args.max_bytes)} to "
        f"{gloo_iterations(args.min_bytes)} timed calls per size (time: the "
        "slower rank, wall clock around the calls and a CUDA sync). HetCCL "
        "runs each GPU as its own domain (`-D split:2`), so all data crosses "
        "its transport.", "", "## Summary", ""]
    parts += common.summary_section(
        failures, misses, f"Missed target ({len(misses)} sizes):",
        "Every run succeeded and the target was met.")
    parts += ["NCCL transports in use (from NCCL_DEBUG=INFO):", ""]
    parts += [f"- {key}: {nccl_transports(run)}"
              for key, _, run, _ in plans if key.startswith("nccl")]
    parts += ["", "## Machine", ""] + [f"- {k}: {v}" for k, v in facts]
    if torch_run and torch_run.result:
        parts.append(f"- PyTorch: {torch_run.result['torch']}")
    parts += ["", "```"] + topo + ["```", "", "## Results", "", table,
                                   "### Pinned host copies, each GPU alone",
                                   "", copies, "## Commands", "",
                                   common.environment_note(), "", "```"]
    parts += [run.shown for _, _, run, _ in plans]
    if torch_run:
        parts.append(torch_run.shown)
    parts += ["```", "", "## Raw numbers", "", "```"]
    for key, _, run, _ in plans:
        parts.append(f"# {key}")
        parts += [common.json_line(r) for r in run.records]
    if torch_run and torch_run.result:
        parts += ["# gloo and copies", common.json_line(torch_run.result)]
    parts += ["```", ""]
    common.write_report_file(path, parts)
    common.chart_hint(path)


def main():
    args = parse_args()
    if args.torch_worker:
        return torch_worker(args)
    start = time.monotonic()
    exe = common.perf_binary(args.build_dir)
    nccl_library = common.find_nvidia_nccl(args.nccl_library)
    facts = common.gpu_machine_facts(nccl_library)
    topo = common.topology()
    failures = []
    with tempfile.TemporaryDirectory(prefix="hetccl-gpu-hetero-") as tmp:
        workdir = Path(tmp)
        log_dir = Path(args.log_dir) if args.log_dir else workdir
        log_dir.mkdir(parents=True, exist_ok=True)
        plans = plan_perf_runs(args, exe, nccl_library, workdir, log_dir)
        for _, _, run, ndomains in plans:
            common.run_required(run, start, args.deadline, args.timeout,
                                ndomains, 2, failures)
        torch_run = None
        if not args.skip_gloo:
            torch_run = TorchRun(args, workdir / "torch.json",
                                 log_dir / "hetero-gloo-and-copies.log")
            left = common.remaining(start, args.deadline)
            if left < 20:
                torch_run.error = f"{torch_run.label}: not run, --deadline reached"
            else:
                torch_run.run(min(args.timeout + 30, left))
            if torch_run.error:
                failures.append(torch_run.error)
                common.log(f"!! {torch_run.error}")
        seconds = time.monotonic() - start
        torch_result = torch_run.result if torch_run else None
        table, misses = main_table(args, plans, torch_result)
        copies = copy_table(torch_result)
        path = common.report_path(args.out, "gpu-hetero-allreduce")
        write_report(path, args, facts, topo, plans, torch_run, table, copies,
                     misses, failures, seconds)
    return common.log_outcome([table, copies], misses, failures,
                              key_numbers(args, plans, torch_result), path,
                              seconds)


if __name__ == "__main__":
    sys.exit(main())
