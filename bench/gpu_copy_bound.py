"""The ceiling of the host-memory path between GPUs: pinned copies on every
GPU at once, to the host and from it at the same time (what a heterogeneous
all-reduce through host memory needs), against one direction alone.

Usage: python3 bench/gpu_copy_bound.py [bytes per copy, default 256M]
"""
import sys
import time

import torch


def measure(directions, size, iters=10):
    """GB/s per GPU and direction with the given directions all running."""
    gpus = range(torch.cuda.device_count())
    jobs = []
    for gpu in gpus:
        device = torch.device("cuda", gpu)
        for direction in directions:
            stream = torch.cuda.Stream(device=device)
            host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
            dev = torch.empty(size, dtype=torch.uint8, device=device)
            jobs.append((direction, stream, host, dev))
    for gpu in gpus:
        torch.cuda.synchronize(gpu)
    start = time.perf_counter()
    for _ in range(iters):
        for direction, stream, host, dev in jobs:
            with torch.cuda.stream(stream):
                if direction == "d2h":
                    host.copy_(dev, non_blocking=True)
                else:
                    dev.copy_(host, non_blocking=True)
    for gpu in gpus:
        torch.cuda.synchronize(gpu)
    seconds = time.perf_counter() - start
    return size * iters / seconds / 1e9


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 256 << 20
    for label, directions in [("d2h alone", ["d2h"]), ("h2d alone", ["h2d"]),
                              ("both at once", ["d2h", "h2d"])]:
        measure(directions, size, 2)  # warm-up
        rate = measure(directions, size)
        print(f"COPY {label}: {rate:.1f} GB/s per GPU and direction "
              f"({torch.cuda.device_count()} GPUs at once)")


if __name__ == "__main__":
    main()
