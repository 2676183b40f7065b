"""A training-style step with collectives captured in a CUDA graph, replayed.

Run under torchrun with HetCCL preloaded as libnccl.so.2 and the 2 ranks in
2 domains (HETCCL_DOMAINS=split:2; rank r on GPU r % count, so one GPU is
enough). The step: y = x * w, all_reduce(y), all_gather of y's head,
broadcast from rank 1 and z = y.sum(). It is captured once with
torch.cuda.graph and replayed --replays times with new inputs copied into
the captured input tensor; after each replay the outputs must equal,
bit for bit, those of the same step run eagerly on the same inputs. Then
the time per replay against the eager step (--time-iters each).

With --expect-refusal (the ranks joined over tcp, where every launch goes
through HetCCL's staging proxy), the capture must fail with an error that
names the graph, and the process group stay usable.

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


def check_refusal(rank):
    x = inputs(rank, 0)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    message = ""
    try:
        with torch.cuda.graph(graph):
            dist.all_reduce(x)
    except Exception as error:  # noqa: BLE001 (any error must name the graph)
        message = str(error)
    refused = "graph" in message
    say(f"{'PASS' if refused else 'FAIL'} rank {rank}: capture over tcp "
        f"refused: {message.splitlines()[0] if message else 'no error'}")
    return refused


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--time-iters", type=int, default=200)
    parser.add_argument("--expect-refusal", action="store_true")
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    world = dist.get_world_size()
    ok = check_refusal(rank) if args.expect_refusal else check_replays(
        args, rank, world)
    if args.expect_refusal:
        # A refused capture must leave the process group usable.
        x = torch.full((COUNT,), float(rank + 1), device="cuda")
        dist.all_reduce(x)
        usable = bool((x == 3).all())
        say(f"{'PASS' if usable else 'FAIL'} rank {rank}: all-reduce after "
            f"the refused capture")
        ok = ok and usable
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
