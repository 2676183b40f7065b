"""All-reduce bus bandwidth through PyTorch's NCCL backend, per size.

Run under torchrun; tests/gpu/run.sh runs it with NVIDIA's NCCL and with
HetCCL preloaded, in one go, so that the two are measured side by side.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    label = sys.argv[1] if len(sys.argv) > 1 else "run"
    size = 8
    while size <= (1 << 31):
        x = torch.ones(max(1, size // 4), device="cuda")
        iters = 20 if size < (1 << 26) else 5
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(x)
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1000 / iters
        busbw = x.numel() * 4 / seconds * 2 * (world - 1) / world / 1e9
        if rank == 0:
            print(f"BENCH {label} {x.numel() * 4} {seconds * 1e6:.2f} "
                  f"{busbw:.2f}", flush=True)
        size *= 8
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
