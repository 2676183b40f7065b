"""Every collective PyTorch's NCCL backend uses, on deterministic data.

Run under torchrun, once with NVIDIA's NCCL and once with HetCCL preloaded as
libnccl.so.2 (tests/gpu/run.sh does both); rank 0 prints one JSON object of
SHA-256 digests of every result, which must be equal between the two runs.
"""
import hashlib
import json
import os

import torch
import torch.distributed as dist


def digest(tensor):
    return hashlib.sha256(tensor.detach().cpu().contiguous().view(torch.uint8)
                          .numpy().tobytes()).hexdigest()[:16]


def data(rank, n, dtype, salt):
    g = torch.Generator().manual_seed(1000 * rank + salt)
    return torch.randn(n, generator=g).to(dtype).cuda()


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    results = {}
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        name = str(dtype).split(".")[-1]
        x = data(rank, 1 << 20 | 3, dtype, 1)
        dist.all_reduce(x)
        results[f"all_reduce_{name}"] = digest(x)
        out = torch.empty(world * 4099, dtype=dtype, device="cuda")
        dist.all_gather_into_tensor(out, data(rank, 4099, dtype, 2))
        results[f"all_gather_{name}"] = digest(out)
        rs = torch.empty(4097, dtype=dtype, device="cuda")
        dist.reduce_scatter_tensor(rs, data(rank, world * 4097, dtype, 3))
        results[f"reduce_scatter_{name}"] = digest(rs)
    b = data(rank, 12345, torch.float32, 4)
    dist.broadcast(b, src=1 % world)
    results["broadcast"] = digest(b)
    r = data(rank, 12345, torch.float32, 5)
    dist.reduce(r, dst=0)
    if rank == 0:
        results["reduce"] = digest(r)
    a2a = torch.empty(world * 1000, device="cuda")
    dist.all_to_all_single(a2a, data(rank, world * 1000, torch.float32, 6))
    results["all_to_all"] = digest(a2a)
    peer = (rank + 1) % world
    sent, got = data(rank, 777, torch.float32, 7), torch.empty(777, device="cuda")
    ops = [dist.P2POp(dist.isend, sent, peer),
           dist.P2POp(dist.irecv, got, (rank - 1) % world)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    results["batch_isend_irecv"] = digest(got)
    if rank == 0:
        dist.send(data(rank, 333, torch.float32, 8), dst=1)
    elif rank == 1:
        recv = torch.empty(333, device="cuda")
        dist.recv(recv, src=0)
        results["send_recv"] = digest(recv)
    dist.barrier()
    group = dist.new_group([0, 1])
    g = data(rank, 5000, torch.float32, 9)
    dist.all_reduce(g, group=group)
    results["new_group_all_reduce"] = digest(g)
    gathered = [None] * world
    dist.all_gather_object(gathered, results)
    if rank == 0:
        merged = {}
        for r_, res in enumerate(gathered):
            for key, value in res.items():
                merged[f"{key}@{r_}"] = value
        print("RESULTS " + json.dumps(merged, sort_keys=True), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
