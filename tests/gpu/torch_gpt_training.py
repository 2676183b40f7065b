"""A small GPT trained for a few steps with unchanged PyTorch.

For comparing communication libraries on real training: run under torchrun,
once with NVIDIA's NCCL and once with HetCCL preloaded as libnccl.so.2
(LD_PRELOAD; tests/gpu/run.sh step train does both). This script knows
nothing of HetCCL: whatever HetCCL needs comes from the caller's
environment, passed on by torchrun to every rank unchanged, e.g.
HETCCL_DOMAINS=split:2 HETCCL_HOSTID=A,B (one host id per rank: rank r of
a communicator takes entry r, so one value serves every rank).

Rank r runs on GPU LOCAL_RANK % (number of GPUs): 4 ranks on 2 GPUs share
them 2 by 2 (only HetCCL can run that; NVIDIA's NCCL refuses 2 ranks of a
communicator on one GPU).

The model: a GPT-style decoder (default 4 layers, d_model 256, 4 heads,
vocabulary 1024, sequences of 128 tokens; attention written out, so that
it is deterministic), the same initial weights on every rank (fixed seed).
The data: synthetic token sequences (arithmetic progressions modulo the
vocabulary with 10 % noise, learnable), generated identically on every rank
from a fixed seed; every step has a fixed global batch (--global-batch
sequences) and rank r takes its contiguous 1/world of it, so runs with 2
and with 4 ranks see the same data per step. Deterministic settings (no
TF32, deterministic algorithms where PyTorch has them).

  --mode ddp    DistributedDataParallel, fp32
  --mode fsdp2  torch.distributed.fsdp.fully_shard on every block and the
                model, MixedPrecisionPolicy(param_dtype=bfloat16,
                reduce_dtype=float32)

AdamW (lr 1e-3). Rank 0 prints:

  CONFIG ...            the run's shape
  LOSSES <l1 l2 ...>    each step's loss (mean over the global batch: the
                        ranks' losses all-reduced), 6 significant digits
  LOSSES_HEX <h1,...>   the same float32 values' bits, for exact comparison
  RANKS_AGREE yes|no    whether every rank holds bit-identical losses of
                        every step (all-gathered and compared)
  PARAMS_AGREE yes|no|n/a
                        ddp: whether every rank holds bit-identical final
                        parameters; fsdp2: n/a (each rank holds a shard)
  TOKENS_PER_S <n>      global tokens per second over the steps after the
                        --warmup steps (wall clock between two
                        torch.cuda.synchronize(), the slowest rank's)
  STEP_MS <ms>          the mean step time of those steps
  COMPUTE_MS <ms>       the mean step time of the same work without any
                        communication: before joining the process group,
                        rank 0 alone trains a copy of the model on its own
                        shard's shape (forward, backward, optimizer; fsdp2:
                        under bfloat16 autocast) for --compute-steps steps
  COMM_EXPOSED_MS <ms>  STEP_MS - COMPUTE_MS (at least 0): an estimate of
                        the communication per step that compute does not
                        hide (it also holds the FSDP/DDP bookkeeping and,
                        with 2 ranks per GPU, the GPU's sharing)
  DONE                  after the process group was destroyed

With --cpu it runs on the CPU with Gloo instead: only to try the script on
a machine without GPUs. Runs in well under a minute per run on H200s.
"""
import argparse
import hashlib
import os
import struct
import sys
import time

# cuBLAS needs this before its first handle to be deterministic.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402  (after the environment it reads)
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

MODEL_SEED = 1234
DATA_SEED = 4321
NOISE = 0.1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("ddp", "fsdp2"), default="ddp")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5,
                        help="steps before the timed ones")
    parser.add_argument("--global-batch", type=int, default=32,
                        help="sequences per step over all ranks")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--compute-steps", type=int, default=10,
                        help="timed steps of rank 0's communication-free "
                        "reference (0: none)")
    parser.add_argument("--cpu", action="store_true",
                        help="CPU and Gloo (to try the script without GPUs)")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        parser.error("--steps must be larger than --warmup")
    if args.d_model % args.heads:
        parser.error("--d-model must be a multiple of --heads")
    return args


def make_deterministic():
    # warn_only: an op without a deterministic implementation warns rather
    # than stopping the run; the comparison across runs has a tolerance.
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


# ----------------------------------------------------------------------------
# The model.

class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.out = nn.Linear(4 * d_model, d_model)

    def forward(self, x, mask):
        batch, length, width = x.shape
        head = width // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, head).transpose(1, 2)
                   for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * head ** -0.5
        weights = scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(batch, length, width)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tokens = nn.Embedding(args.vocab, args.d_model)
        self.positions = nn.Embedding(args.seq, args.d_model)
        self.blocks = nn.ModuleList(Block(args.d_model, args.heads)
                                    for _ in range(args.layers))
        self.ln = nn.LayerNorm(args.d_model)
        self.head = nn.Linear(args.d_model, args.vocab, bias=False)

    def forward(self, idx):
        length = idx.shape[1]
        where = torch.arange(length, device=idx.device)
        x = self.tokens(idx) + self.positions(where)
        # Causal mask, made here rather than kept as a buffer (DDP would
        # broadcast a buffer every step).
        mask = torch.ones(length, length, dtype=torch.bool,
                          device=idx.device).triu(1)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln(x))


def make_model(args):
    torch.manual_seed(MODEL_SEED)  # the same initial weights on every rank
    return GPT(args)


def loss_of(model, inputs, targets, vocab):
    logits = model(inputs)
    return F.cross_entropy(logits.float().reshape(-1, vocab),
                           targets.reshape(-1))


# ----------------------------------------------------------------------------
# The data: the same on every rank, each rank taking its shard.

def make_tokens(args):
    """(steps, global batch, seq + 1) tokens, the same on every rank."""
    g = torch.Generator().manual_seed(DATA_SEED)
    shape = (args.steps, args.global_batch, 1)
    start = torch.randint(0, args.vocab, shape, generator=g)
    stride = torch.randint(1, 17, shape, generator=g)
    tokens = (start + stride * torch.arange(args.seq + 1)) % args.vocab
    noise = torch.randint(0, args.vocab, tokens.shape, generator=g)
    keep = torch.rand(tokens.shape, generator=g) >= NOISE
    return torch.where(keep, tokens, noise)


def shard(tokens, rank, world, device):
    per_rank = tokens.shape[1] // world
    mine = tokens[:, rank * per_rank:(rank + 1) * per_rank]
    return mine[:, :, :-1].to(device), mine[:, :, 1:].to(device)


# ----------------------------------------------------------------------------
# Timing.

def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def compute_reference_ms(args, device, inputs, targets):
    """Mean step time of rank 0's shard without communication: a copy of the
    model trained alone (fsdp2: under bfloat16 autocast, as FSDP2's
    bfloat16 parameters compute)."""
    if args.compute_steps <= 0:
        return None
    model = make_model(args).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16,
                              enabled=args.mode == "fsdp2")
    warmup = 3
    start = 0.0
    for step in range(warmup + args.compute_steps):
        if step == warmup:
            synchronize(device)
            start = time.perf_counter()
        with autocast:
            loss = loss_of(model, inputs[0], targets[0], args.vocab)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    ms = (time.perf_counter() - start) / args.compute_steps * 1e3
    del model, optimizer
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return ms


# ----------------------------------------------------------------------------
# Training.

def wrap(args, model, device, world):
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(
            model,
            device_ids=None if device.type == "cpu" else [device.index])
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mesh = init_device_mesh(device.type, (world,))
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                  reduce_dtype=torch.float32)
    for block in model.blocks:
        fully_shard(block, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    return model


def parameter_digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().view(torch.uint8).numpy()
                 .tobytes())
    return h.hexdigest()[:32]


def float_bits_hex(value):
    return struct.pack("<f", value).hex()


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    if args.global_batch % world:
        sys.exit(f"--global-batch {args.global_batch} is not a multiple of "
                 f"the {world} ranks")
    if args.cpu:
        device = torch.device("cpu")
    else:
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    make_deterministic()
    inputs, targets = shard(make_tokens(args), rank, world, device)

    # Before joining the group, so that no other rank's work or
    # communication runs meanwhile (the others wait in the rendezvous).
    compute_ms = (compute_reference_ms(args, device, inputs, targets)
                  if rank == 0 else None)

    dist.init_process_group("gloo" if args.cpu else "nccl")
    assert dist.get_rank() == rank and dist.get_world_size() == world
    base = make_model(args)
    params = sum(p.numel() for p in base.parameters())
    model = wrap(args, base.to(device), device, world)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    losses = []
    start = 0.0
    for step in range(args.steps):
        if step == args.warmup:
            synchronize(device)
            start = time.perf_counter()
        loss = loss_of(model, inputs[step], targets[step], args.vocab)
        loss.backward()  # DDP all-reduces, FSDP2 reduce-scatters gradients
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach().float())
    synchronize(device)
    elapsed = torch.tensor([time.perf_counter() - start], device=device)

    # Outside the timed steps: the slowest rank's time, the global losses
    # (equal shards: the mean of the ranks' means), and every rank's copy.
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    mean_losses = torch.stack(losses)
    dist.all_reduce(mean_losses)
    mean_losses /= world
    gathered = [torch.empty_like(mean_losses) for _ in range(world)]
    dist.all_gather(gathered, mean_losses)
    ranks_agree = all(torch.equal(g.view(torch.int32),
                                  mean_losses.view(torch.int32))
                      for g in gathered)
    params_agree = "n/a"
    if args.mode == "ddp":
        digest = parameter_digest(model.module)
        digests = [None] * world
        dist.all_gather_object(digests, digest)
        params_agree = "yes" if all(d == digest for d in digests) else "no"

    if rank == 0:
        values = mean_losses.cpu().tolist()
        timed = args.steps - args.warmup
        seconds = elapsed.item()
        step_ms = seconds / timed * 1e3
        tokens_per_s = args.global_batch * args.seq * timed / seconds
        print(f"CONFIG mode {args.mode} ranks {world} gpus "
              f"{'cpu' if args.cpu else torch.cuda.device_count()} "
              f"params {params} layers {args.layers} d_model {args.d_model} "
              f"heads {args.heads} vocab {args.vocab} seq {args.seq} "
              f"global_batch {args.global_batch} per_rank "
              f"{args.global_batch // world} steps {args.steps} warmup "
              f"{args.warmup} torch {torch.__version__}", flush=True)
        print("LOSSES " + " ".join(f"{v:.6g}" for v in values), flush=True)
        print("LOSSES_HEX " + ",".join(float_bits_hex(v) for v in values),
              flush=True)
        print(f"RANKS_AGREE {'yes' if ranks_agree else 'no'}", flush=True)
        print(f"PARAMS_AGREE {params_agree}", flush=True)
        print(f"TOKENS_PER_S {tokens_per_s:.1f}", flush=True)
        print(f"STEP_MS {step_ms:.3f}", flush=True)
        if compute_ms is None:
            print("COMPUTE_MS -", flush=True)
            print("COMM_EXPOSED_MS -", flush=True)
        else:
            print(f"COMPUTE_MS {compute_ms:.3f}", flush=True)
            print(f"COMM_EXPOSED_MS {max(0.0, step_ms - compute_ms):.3f}",
                  flush=True)
        print(f"loss {values[0]:.6g} -> {values[-1]:.6g} over {args.steps} "
              "steps", flush=True)
    dist.destroy_process_group()
    if rank == 0:
        print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
