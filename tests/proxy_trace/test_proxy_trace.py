#!/usr/bin/env python3
"""ctest proxy_trace_of_emulated_gpus: HETCCL_PROXY_TRACE on 2 emulated
GPU ranks as pretend hosts (the staged engine and its proxy, over tcp),
read back by bench/proxy_trace.py.

    test_proxy_trace.py HETCCL_PERF

Runs all-reduces of 1 MiB (one chunk) and 3 MiB + 4 bytes (four chunks of
1 MiB, the last of one element) and send/recv exchanges of the same
sizes, checked, and then checks:
- each rank wrote PREFIX.RANK, and every line reads back, with each piece
  handed over before it was posted and posted before it was done;
- each all-reduce of S bytes moved exactly S bytes each way on each rank
  (2 ranks, 1-rank domains: half the buffer as partials, half as
  results), and each send/recv exchange S bytes each way;
- bench/proxy_trace.py's summary and piece list run on the files.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bench"))
import proxy_trace  # noqa: E402

SIZES = (1 << 20, 3 * (1 << 20) + 4)


def run_perf(perf, prefix):
    env = dict(os.environ, HETCCL_EMULATED_GPU="1", HETCCL_HOSTID="A,B",
               HETCCL_TRANSPORT="tcp", HETCCL_CHUNK="1M",
               HETCCL_ONE_SHOT_MAX="32K",
               HETCCL_PROXY_TRACE=str(prefix))
    for size in SIZES:
        result = subprocess.run(
            [perf, "-np", "2", "-D", "0,1", "-x", "allreduce,sendrecv",
             "-b", str(size), "-e", str(size), "-w", "0", "-n", "2",
             "--check", "1", "--placement", "out", "--timeout", "100"],
            env=env, capture_output=True, text=True, timeout=150)
        if result.returncode != 0:
            sys.exit(f"hetccl-perf failed:\n{result.stdout}\n{result.stderr}")
        yield size


def check_rank(path, sizes):
    pieces = proxy_trace.read_trace(path)
    if not pieces:
        sys.exit(f"{path}: no pieces")
    for piece in pieces:
        if not piece.adopted <= piece.posted <= piece.done:
            sys.exit(f"{path}: piece out of order: {piece}")
    moved = proxy_trace.bytes_per_call(pieces)
    for kind in ("AllReduce", "SendRecv"):
        # hetccl-perf's own timing all-reduces move 8 bytes.
        seen = sorted(totals["send"] for call, totals in moved.items()
                      if call.startswith(kind + ":") and totals["send"] > 8)
        for call, totals in moved.items():
            if call.startswith(kind + ":") and totals["send"] != totals["recv"]:
                sys.exit(f"{path}: {call} sent {totals['send']} bytes but "
                         f"received {totals['recv']}")
        # per size: one checked launch and two timed ones
        wanted = sorted(size for size in sizes for _ in range(3))
        if seen != wanted:
            sys.exit(f"{path}: {kind} calls moved {seen} bytes each way, "
                     f"expected {wanted}")


def main():
    perf = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        sizes = []
        for size in run_perf(perf, Path(scratch) / "trace"):
            sizes.append(size)
            for rank in (0, 1):
                path = Path(scratch) / f"trace.{rank}"
                if not path.exists():
                    sys.exit(f"rank {rank} wrote no {path}")
                check_rank(path, [size])
            print(f"{size} bytes: both ranks' traces hold every piece")
        for args in (["--last", "3"], ["--pieces", "AllReduce:2"]):
            result = subprocess.run(
                [sys.executable, str(REPO / "bench" / "proxy_trace.py"),
                 str(Path(scratch) / "trace.0")] + args,
                capture_output=True, text=True)
            if result.returncode != 0 or "send" not in result.stdout:
                sys.exit(f"proxy_trace.py {args} failed:\n{result.stdout}"
                         f"{result.stderr}")
            print(result.stdout.splitlines()[0])
    print("proxy traces: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
