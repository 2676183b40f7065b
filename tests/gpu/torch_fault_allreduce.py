"""A loop of checked all-reduces for the fault scenarios of tests/gpu/gpu_faults.py.

Started by torchrun or by hand with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR
and MASTER_PORT; rank r runs on GPU r % count (HetCCL runs 2 ranks on one
GPU; NVIDIA's NCCL does not). The process group (backend nccl: HetCCL where
its libnccl.so.2 is preloaded) has a timeout of --pg-timeout seconds.

Prints, line by line (PYTHONUNBUFFERED or flush):
  READY rank=R pid=P         after the first checked all-reduces
  FAULT_SEEN rank=R iter=I after=S TYPE: MESSAGE
                             when a call raised (S: seconds since READY);
                             the exception is then raised again, so the
                             process ends as an unchanged program would
  WRONG rank=R iter=I value=V
                             a checked result that is not the sum
  NO_FAULT rank=R iters=I    --seconds passed without a fault (exit 0)

--mode kill: every rank loops until it is killed or a call fails. With
--graph the loop replays a CUDA graph that captured the fill and the
all-reduce, and at every check also all-reduces a one-element "loss"
eagerly, as a training loop that logs its loss does: a replay calls no
NCCL function, so that call is where a lost peer reaches the program.
--leave-after S (kill mode): rank 1 leaves by os._exit(0) S seconds after
READY, printing LEAVING rank=1 first: a departure without destroy, which
the survivor must not take for a finished operation.
--check-every N: check every N-th result (1: every one).
--agreed-stop (kill mode): the loop ends when rank 0 says so, carried in
the all-reduce itself (the last element: rank 0 adds 1 once --seconds have
passed on its clock), so that every rank makes the same all-reduces and a
run without a fault ends cleanly even if one rank was stopped for a while;
every result is checked.
--mode abort: both ranks loop --iters all-reduces; then rank 1 stops calling
collectives (it sleeps, keeping its communicator), rank 0 launches one more
all-reduce, which cannot finish, and a thread aborts the process group
--abort-after seconds later while the main thread waits for the result.
Rank 0 prints ABORT_CALLED, ABORT_RETURNED after=S (how it aborted) and
UNBLOCKED after=S (seconds since ABORT_CALLED, and what the wait returned).
"""
import argparse
import datetime
import os
import sys
import threading
import time

import torch
import torch.distributed as dist


def say(text):
    print(text, flush=True)


def abort_process_group():
    """Aborts the default process group; returns how."""
    c10d = dist.distributed_c10d
    if hasattr(c10d, "_abort_process_group"):
        c10d._abort_process_group()
        return "distributed_c10d._abort_process_group()"
    group = c10d._get_default_group()
    backend = group._get_backend(torch.device("cuda"))
    for name in ("abort", "_abort", "shutdown"):
        if hasattr(backend, name):
            getattr(backend, name)()
            return f"ProcessGroupNCCL.{name}()"
    raise RuntimeError("no way to abort the process group in this PyTorch")


def replay_of(work):
    """A function that replays `work` captured in a CUDA graph."""
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        work()
    return graph.replay


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("kill", "abort"), default="kill")
    parser.add_argument("--seconds", type=float, default=60,
                        help="loop at most this long (kill mode)")
    parser.add_argument("--pg-timeout", type=float, default=20)
    parser.add_argument("--elements", type=int, default=1 << 18)
    parser.add_argument("--iters", type=int, default=300,
                        help="all-reduces before the abort (abort mode)")
    parser.add_argument("--abort-after", type=float, default=2)
    parser.add_argument("--graph", action="store_true",
                        help="kill mode: replay a captured all-reduce")
    parser.add_argument("--leave-after", type=float, default=None,
                        help="kill mode: rank 1 calls os._exit(0) then")
    parser.add_argument("--check-every", type=int, default=10)
    parser.add_argument("--agreed-stop", action="store_true",
                        help="kill mode: rank 0 ends every rank's loop")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group(
        "nccl", timeout=datetime.timedelta(seconds=args.pg_timeout),
        device_id=device)
    x = torch.empty(args.elements, device=device)
    iteration = 0
    ready_at = None
    wrong = 0

    # Every iteration's values are fresh, so that a stale result (the
    # previous iteration's sum) is caught: rank r adds r + 1 + iteration.
    fill_value = torch.zeros(1, device=device)
    stop_flag = torch.zeros(1, device=device)  # --agreed-stop: rank 0's

    def all_reduce():
        x.copy_(fill_value.expand_as(x))
        if args.agreed_stop:
            x[-1:].copy_(stop_flag)
        dist.all_reduce(x)

    def expected(at_iteration):
        return float(world * (world + 1) // 2 + world * at_iteration)

    launch = all_reduce

    def step(check):
        nonlocal iteration, wrong
        fill_value.fill_(float(rank + 1 + iteration))
        launch()
        iteration += 1
        if check:
            if args.graph:
                dist.all_reduce(torch.ones(1, device=device))
            value = x[args.elements // 2].item()  # waits for the result
            if value != expected(iteration - 1):
                wrong += 1
                if wrong <= 3:
                    say(f"WRONG rank={rank} iter={iteration} value={value} "
                        f"expected={expected(iteration - 1)}")

    try:
        for _ in range(20):
            step(check=True)
        if args.graph:
            launch = replay_of(all_reduce)
        ready_at = time.monotonic()
        say(f"READY rank={rank} pid={os.getpid()}")
        if args.mode == "kill":
            while True:
                over = time.monotonic() - ready_at >= args.seconds
                if args.agreed_stop:
                    if rank == 0 and over:
                        stop_flag.fill_(1.0)
                elif over:
                    break
                if (rank == 1 and args.leave_after is not None and
                        time.monotonic() - ready_at > args.leave_after):
                    torch.cuda.synchronize()
                    say(f"LEAVING rank={rank} iter={iteration}")
                    os._exit(0)
                step(check=args.agreed_stop or
                     iteration % args.check_every == 0)
                if args.agreed_stop and x[-1].item() > 0:
                    break
            torch.cuda.synchronize()
            say(f"NO_FAULT rank={rank} iters={iteration} wrong={wrong}")
            dist.destroy_process_group()
            return 0
        for _ in range(args.iters):
            step(check=iteration % args.check_every == 0)
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 - reported, then raised again
        after = time.monotonic() - ready_at if ready_at else -1
        message = " ".join(str(error).split())[:400]
        say(f"FAULT_SEEN rank={rank} iter={iteration} after={after:.3f} "
            f"{type(error).__name__}: {message}")
        raise

    # Abort mode, after the common all-reduces.
    if rank != 0:
        say(f"IDLE rank={rank}")
        time.sleep(60)  # the driver ends this process
        return 0
    x.fill_(1.0)
    dist.all_reduce(x)  # rank 1 never joins: this cannot finish
    called = {}

    def aborter():
        time.sleep(args.abort_after)
        called["at"] = time.monotonic()
        say(f"ABORT_CALLED rank={rank}")
        try:
            how = abort_process_group()
        except Exception as error:  # noqa: BLE001
            how = f"raised {type(error).__name__}: {error}"
        after = time.monotonic() - called["at"]
        say(f"ABORT_RETURNED rank={rank} after={after:.3f} {how}")

    thread = threading.Thread(target=aborter, daemon=True)
    thread.start()
    try:
        value = x[0].item()
        outcome = f"returned {value}"
    except Exception as error:  # noqa: BLE001
        outcome = f"raised {type(error).__name__}: {' '.join(str(error).split())[:300]}"
    now = time.monotonic()
    after = f"{now - called['at']:.3f}" if "at" in called else "before-abort"
    say(f"UNBLOCKED rank={rank} after={after} {outcome}")
    thread.join(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
