"""A training-style step with collectives captured in a CUDA graph, replayed.

Run under torchrun with HetCCL preloaded as libnccl.so.2 and the 2 ranks in
2 domains (HETCCL_DOMAINS=split:2; rank r on GPU r % count, so one GPU is
enough). The step: y = x * w, all_reduce(y), all_gather of y's head,
broadcast from rank 1 and z = y.sum(). It is captured once with
torch.cuda.graph and replayed --replays times with new inputs copied into
the captured input tensor; after each replay the outputs must equal,
bit for bit, those of the same step run eagerly on the same inputs. Then
the time per replay against the eager step (--time-iters each).

Over shm the launches are stream-driven; with HETCCL_TRANSPORT=tcp every
launch goes through HetCCL's staging proxy, whose part a replay starts
from its stream.

Then a capture whose all-reduce is larger than any launch before it, with
no warm-up: the staging rings' slots are pinned as the pieces need, so
they grow inside the capture; its replays must equal eager all-reduces.

Prints one line per check (PASS/FAIL), a TIMING line, and exits 1 on any
FAIL.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

COUNT = 2048  # 8 KB of float32


def say(text):
    print(text, flush=True)


def step(x, w, gathered, bcast):
    y = x * w
    dist.all_reduce(y)
    dist.all_gather_into_tensor(gathered, y[:256].contiguous())
    bcast.copy_(y[:512])
    dist.broadcast(bcast, src=1)
    return y, y.sum()


def inputs(rank, i):
    g = torch.Generator().manual_seed(7919 * i + rank)
    return torch.randn(COUNT, generator=g).cuda()


def outputs(x, w, gathered, bcast):
    y, total = step(x, w, gathered, bcast)
    return [t.clone() for t in (y, total, gathered, bcast)]


def check_replays(args, rank, world):
    w = torch.full((COUNT,), 0.5, device="cuda")
    x = inputs(rank, 0)
    gathered = torch.empty(world * 256, device="cuda")
    bcast = torch.empty(512, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside the capture
        step(x, w, gathered, bcast)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y, total = step(x, w, gathered, bcast)
    captured = (y, total, gathered, bcast)
    wrong = 0
    for i in range(1, args.replays + 1):
        new = inputs(rank, i)
        x.copy_(new)
        graph.replay()
        torch.cuda.synchronize()
        got = [t.clone() for t in captured]
        eager_gathered = torch.empty_like(gathered)
        eager_bcast = torch.empty_like(bcast)
        want = outputs(new, w, eager_gathered, eager_bcast)
        torch.cuda.synchronize()
        if not all(torch.equal(a, b) for a, b in zip(got, want)):
            wrong += 1
    ok = wrong == 0
    say(f"{'PASS' if ok else 'FAIL'} rank {rank}: {args.replays} replays "
        f"with new inputs equal the eager step bit for bit ({wrong} differ)")
    timing(args, rank, graph, x, w, gathered, bcast)
    return ok


def check_larger_capture(rank):
    big = torch.empty(1 << 20, device="cuda")  # 4 MB of float32
    source = torch.empty_like(big)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        big.copy_(source)
        dist.all_reduce(big)
    wrong = 0
    for i in range(1, 4):
        g = torch.Generator().manual_seed(104729 * i + rank)
        source.copy_(torch.randn(big.numel(), generator=g).cuda())
        graph.replay()
        eager = source.clone()
        dist.all_reduce(eager)
        torch.cuda.synchronize()
        if not torch.equal(big, eager):
            wrong += 1
    ok = wrong == 0
    say(f"{'PASS' if ok else 'FAIL'} rank {rank}: a 4 MB all-reduce "
        f"captured with no launch that large before replays as eager ones "
        f"do ({wrong} of 3 differ)")
    return ok


def timing(args, rank, graph, x, w, gathered, bcast):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.time_iters):
        step(x, w, gathered, bcast)
    torch.cuda.synchronize()
    eager = (time.perf_counter() - start) / args.time_iters * 1e6
    start = time.perf_counter()
    for _ in range(args.time_iters):
        graph.replay()
    torch.cuda.synchronize()
    replay = (time.perf_counter() - start) / args.time_iters * 1e6
    say(f"TIMING rank {rank}: step eager {eager:.1f} us, graph replay "
        f"{replay:.1f} us ({eager / replay:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--time-iters", type=int, default=200)
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    world = dist.get_world_size()
    ok = check_replays(args, rank, world)
    ok = check_larger_capture(rank) and ok
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
