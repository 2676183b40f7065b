"""Which launches make a PyTorch CUDA-graph replay slower than eager steps.

Run under torchrun with HetCCL preloaded as libnccl.so.2 and 2 ranks in 2
domains (HETCCL_DOMAINS=split:2, both on GPU 0), over the transport under
study (HETCCL_TRANSPORT=tcp: the staging proxy; shm: the stream-driven
path):

    HETCCL_DOMAINS=split:2 HETCCL_TRANSPORT=tcp LD_PRELOAD=build/src/libnccl.so.2 \\
      python3 -m torch.distributed.run --standalone --nproc_per_node 2 \\
      bench/torch_graph_variants.py

For each step (an all-reduce of 8 KB, an all-gather, a broadcast, an
all-reduce after a multiply kernel, and the three collectives of
tests/gpu/torch_graph_collectives.py) it captures the step once and 10
times in a row in one graph, and prints rank 0's time per step, eager
against replayed: "TG NAME xK/graph: eager E us/step, replay R us/step".
Results are not checked here (the tests do that); this only times.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

COUNT = 2048  # 8 KB of float32


def timed(step, graph, iters):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    eager = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(iters):
        graph.replay()
    torch.cuda.synchronize()
    return eager, time.perf_counter() - start


def captured(step):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
        step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for _ in range(3):
        graph.replay()
    return graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100,
                        help="steps timed per variant, eager and replayed")
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(
        "nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    x = torch.ones(COUNT, device="cuda")
    gathered = torch.empty(2 * 256, device="cuda")
    bcast = torch.empty(512, device="cuda")
    launches = {
        "ar": [lambda: dist.all_reduce(x)],
        "ag": [lambda: dist.all_gather_into_tensor(gathered, x[:256])],
        "bc": [lambda: dist.broadcast(bcast, src=1)],
        "ar+mul": [lambda: x.mul_(1.0), lambda: dist.all_reduce(x)],
    }
    launches["ar,ag,bc"] = launches["ar"] + launches["ag"] + launches["bc"]
    for name, calls in launches.items():
        for per_graph in (1, 10):
            def step():
                for _ in range(per_graph):
                    for call in calls:
                        call()
            graph = captured(step)
            iters = max(1, args.steps // per_graph)
            eager, replay = timed(step, graph, iters)
            steps = iters * per_graph
            if rank == 0:
                print(f"TG {name} x{per_graph}/graph: eager "
                      f"{eager / steps * 1e6:.0f} us/step, replay "
                      f"{replay / steps * 1e6:.0f} us/step", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
