"""A short deterministic DDP training run, for comparing two NCCL libraries.

Run under torchrun on 2 GPUs, once with NVIDIA's NCCL and once with HetCCL
preloaded as libnccl.so.2 (tests/gpu/run.sh does both). Everything but the
communication library is fixed: seeds, synthetic data per rank, fp32 without
TF32, deterministic algorithms, and DDP buckets small enough that every step
all-reduces its gradients in several buckets. Rank 0 prints:

  LOSSES <step count> <hex of each step's loss bits, float32, comma-separated>
  PARAMS <sha256 of the final parameters, first 32 hex digits>
  RANKS_AGREE yes|no   (whether every rank holds bit-identical parameters)

Two runs whose LOSSES and PARAMS lines differ did not compute the same sums.
With --cpu it runs on the CPU with Gloo instead: only to try the script on a
machine without GPUs.
"""
import hashlib
import os
import struct
import sys

# cuBLAS needs this before its first handle to be deterministic.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402  (after the environment it reads)
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

STEPS = 30
BATCH = 64
IN_FEATURES = 256
HIDDEN = 512
OUT_FEATURES = 64
# 2.7 MB of fp32 parameters (tensors of 0.5 and 1 MB and smaller) in
# buckets of at most 0.25 MB after DDP's 1 MB first one: every large tensor
# gets a bucket of its own, so each step all-reduces 5 or more buckets.
BUCKET_CAP_MB = 0.25


def make_deterministic():
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    # TF32 would round fp32 matmuls differently from fp32; keep plain fp32.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def make_model():
    torch.manual_seed(1234)  # the same initial weights on every rank
    return torch.nn.Sequential(
        torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.GELU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.GELU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.GELU(),
        torch.nn.Linear(HIDDEN, OUT_FEATURES))


def make_data(rank, device):
    """Inputs and regression targets of every step, fixed per rank."""
    g = torch.Generator().manual_seed(1000 + rank)
    inputs = torch.randn(STEPS, BATCH, IN_FEATURES, generator=g)
    teacher = torch.randn(IN_FEATURES, OUT_FEATURES,
                          generator=torch.Generator().manual_seed(7))
    targets = torch.tanh(inputs @ teacher / IN_FEATURES ** 0.5)
    return inputs.to(device), targets.to(device)


def float_bits_hex(value):
    return struct.pack("<f", value).hex()


def parameter_digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().view(torch.uint8).numpy()
                 .tobytes())
    return h.hexdigest()[:32]


def main():
    on_cpu = "--cpu" in sys.argv[1:]
    dist.init_process_group("gloo" if on_cpu else "nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    if on_cpu:
        device = torch.device("cpu")
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    make_deterministic()

    model = DistributedDataParallel(
        make_model().to(device),
        device_ids=None if on_cpu else [local_rank],
        bucket_cap_mb=BUCKET_CAP_MB)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    inputs, targets = make_data(rank, device)
    losses = []
    for step in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(inputs[step]), targets[step])
        loss.backward()  # DDP all-reduces the gradients bucket by bucket
        optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(float_bits_hex((mean / world).item()))

    digest = parameter_digest(model.module)
    digests = [None] * world
    dist.all_gather_object(digests, digest)
    if rank == 0:
        print(f"LOSSES {STEPS} {','.join(losses)}", flush=True)
        print(f"PARAMS {digest}", flush=True)
        agree = all(d == digest for d in digests)
        print(f"RANKS_AGREE {'yes' if agree else 'no'}", flush=True)
        first = struct.unpack("<f", bytes.fromhex(losses[0]))[0]
        last = struct.unpack("<f", bytes.fromhex(losses[-1]))[0]
        print(f"loss {first:.6f} -> {last:.6f} over {STEPS} steps",
              flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
