"""Soak: random collectives on GPU buffers for a time budget, every result checked.

Run under torchrun with HetCCL preloaded as libnccl.so.2 and the ranks in
2 domains (tests/gpu/run.sh, step soak: HETCCL_DOMAINS=split:2, rank r on
GPU r % count). Each round, chosen by --seed and the round number alone
(the same on every rank, so a failure names the round that reproduces it):
an all-reduce (sum, max, min, product, avg), all-gather, reduce-scatter,
broadcast, all-to-all, reduce, or a send/receive ring in a group; float32,
float64, bfloat16, float16, int32, int64 or uint8; 0 bytes to --max-mb, in
place or not. Inputs are small integers, so every expected value is exact
in every type and order of reduction; every element is checked.

The process must not grow: descriptors, threads and /dev/shm segments of
HetCCL after the last round against after --warm-rounds rounds, and RSS
(after malloc_trim) at the end against its value a third of the way in,
within --rss-slack-mb. The first third is warm-up: CUDA loads a kernel
the first time a type and operation meet, the caching allocator and
PyTorch's own pools fill; what still grows over the last two thirds is a
leak. RSS is sampled every tenth of the budget and printed as a SERIES
line (anonymous and file-backed parts apart), then one SOAK line with the
counts and a PASS/FAIL line; exits 1 on a wrong result or growth.
"""
import argparse
import ctypes
import gc
import os
import random
import sys
import time

import torch
import torch.distributed as dist

SMALL, MEDIUM = 4096, 8 << 20
TYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16,
         torch.int32, torch.int64, torch.uint8]
KINDS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast",
         "all_to_all", "reduce", "ring"]
OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
       "min": dist.ReduceOp.MIN, "product": dist.ReduceOp.PRODUCT,
       "avg": dist.ReduceOp.AVG}


def values(n, rank, salt, dtype, device):
    """1..4 by index, rank and salt: exact in every type, and the product
    of two ranks' values (at most 16) too."""
    i = torch.arange(n, dtype=torch.int64)
    return ((i * 7 + rank * 3 + salt) % 4 + 1).to(dtype).to(device)


def combine(parts, op):
    stacked = torch.stack([p.to(torch.float64) for p in parts])
    return {"sum": stacked.sum(0), "max": stacked.max(0).values,
            "min": stacked.min(0).values, "product": stacked.prod(0),
            "avg": stacked.mean(0)}[op]


def choose(rng, world, max_bytes):
    kind = rng.choice(KINDS)
    dtype = rng.choice(TYPES)
    reducing = kind in ("all_reduce", "reduce_scatter", "reduce")
    ops = ["sum", "max", "min", "product"] + (
        ["avg"] if dtype.is_floating_point else [])
    op = rng.choice(ops) if reducing else "sum"
    if dtype == torch.uint8 and op == "product" and world > 2:
        op = "max"  # 4 ** 3 and more would wrap around
    pick = rng.random()
    size = rng.randint(0, SMALL) if pick < 0.7 else (
        rng.randint(SMALL, MEDIUM) if pick < 0.98 else
        rng.randint(MEDIUM, max_bytes))
    n = size // torch.tensor([], dtype=dtype).element_size()
    n -= n % world  # per-rank blocks
    return kind, dtype, op, n, rng.random() < 0.5, rng.randrange(world)


def run_round(kind, dtype, op, n, in_place, root, rank, world, salt, device):
    """Runs one collective; returns (output, expected) on this rank."""
    mine = values(n, rank, salt, dtype, device)
    every = [values(n, r, salt, dtype, "cpu") for r in range(world)]
    block = n // world
    if kind == "all_reduce":
        dist.all_reduce(mine, op=OPS[op])
        return mine, combine(every, op)
    if kind == "reduce":
        dist.reduce(mine, dst=root, op=OPS[op])
        return (mine, combine(every, op)) if rank == root else (None, None)
    if kind == "broadcast":
        dist.broadcast(mine, src=root)
        return mine, every[root]
    if kind == "all_gather":
        part = mine[rank * block:(rank + 1) * block]  # in place: a view
        out = mine if in_place else torch.empty_like(mine)
        dist.all_gather_into_tensor(out, part if in_place else part.clone())
        return out, torch.cat([e[r * block:(r + 1) * block]
                               for r, e in enumerate(every)])
    if kind == "reduce_scatter":
        out = torch.empty(block, dtype=dtype, device=device)
        dist.reduce_scatter_tensor(out, mine, op=OPS[op])
        return out, combine(every, op)[rank * block:(rank + 1) * block]
    if kind == "all_to_all":
        out = torch.empty_like(mine)
        dist.all_to_all_single(out, mine)
        return out, torch.cat([e[rank * block:(rank + 1) * block]
                               for e in every])
    got = torch.empty_like(mine)  # ring: to the next rank, from the previous
    reqs = dist.batch_isend_irecv([
        dist.P2POp(dist.isend, mine, (rank + 1) % world),
        dist.P2POp(dist.irecv, got, (rank - 1) % world)])
    for req in reqs:
        req.wait()
    return got, every[(rank - 1) % world]


def resources():
    gc.collect()
    # Freed heap stays with the process until trimmed: without this, RSS
    # measures the allocator's high-water mark (the expected values of a
    # 64 MB round are hundreds of MB), not what the process holds.
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    shm = [name for name in os.listdir("/dev/shm") if "hetccl" in name.lower()]
    status = {}
    with open("/proc/self/status") as lines:
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                status[key] = int(value.split()[0]) / 1024  # kB to MB
    return {"fds": len(os.listdir("/proc/self/fd")),
            "threads": len(os.listdir("/proc/self/task")),
            "shm": len(shm), "rss_mb": round(status["VmRSS"], 1),
            "anon_mb": round(status["RssAnon"], 1),
            "file_mb": round(status["RssFile"], 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-mb", type=int, default=64)
    parser.add_argument("--warm-rounds", type=int, default=50)
    parser.add_argument("--rss-slack-mb", type=float, default=32)
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    start, wrong, ops, moved, warm = time.monotonic(), 0, 0, 0, None
    round_, series = 0, []  # (seconds, round, resources) every tenth
    while True:
        rng = random.Random(args.seed * 1000003 + round_)
        kind, dtype, op, n, in_place, root = choose(rng, world,
                                                   args.max_mb << 20)
        out, want = run_round(kind, dtype, op, n, in_place, root, rank, world,
                              round_ % 97, device)
        if out is not None and not torch.equal(out.cpu().to(torch.float64),
                                               want.to(torch.float64)):
            wrong += 1
            if wrong <= 5:
                print(f"WRONG rank {rank} round {round_}: {kind} {dtype} "
                      f"{op} n={n} in_place={in_place} root={root}",
                      flush=True)
        ops += 1
        moved += n * torch.tensor([], dtype=dtype).element_size()
        round_ += 1
        if round_ == args.warm_rounds:
            torch.cuda.synchronize()
            warm = resources()
        elapsed = time.monotonic() - start
        if len(series) < 10 and elapsed >= len(series) * args.seconds / 10:
            series.append((elapsed, round_, resources()))
        done = torch.tensor([time.monotonic() - start > args.seconds],
                            dtype=torch.int32, device=device)
        dist.all_reduce(done, op=dist.ReduceOp.MAX)  # all stop together
        if done.item() and round_ > args.warm_rounds:
            break
    end = resources()
    series.append((time.monotonic() - start, round_, end))
    grew = [k for k in ("fds", "threads", "shm") if end[k] > warm[k]]
    third = next(s for s in series if s[0] >= args.seconds / 3)
    if end["rss_mb"] > third[2]["rss_mb"] + args.rss_slack_mb:
        grew.append("rss")
    print(f"SERIES rank {rank}: " + "; ".join(
        f"{t:.0f} s round {r} rss {res['rss_mb']} anon {res['anon_mb']} "
        f"file {res['file_mb']}" for t, r, res in series), flush=True)
    print(f"SOAK rank {rank} seed {args.seed}: {round_} rounds, {ops} "
          f"operations, {moved / 1e6:.1f} MB, {wrong} wrong, in "
          f"{time.monotonic() - start:.1f} s; after {args.warm_rounds} rounds "
          f"{warm}, a third of the way in (round {third[1]}) {third[2]}, at "
          f"the end {end}", flush=True)
    ok = wrong == 0 and not grew
    print(f"{'PASS' if ok else 'FAIL'} rank {rank}: "
          f"{wrong} wrong, grew: {', '.join(grew) or 'nothing'}", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
