"""Calls that disagree, on real GPU ranks under unchanged PyTorch
(tests/gpu/run.sh, step mismatch).

Two ranks on GPU 0 as two domains (HETCCL_DOMAINS=split:2), over shm (the
stream-driven path) and as two pretend hosts over tcp (HETCCL_HOSTID=A,B:
the staged GPU engine), HetCCL preloaded as libnccl.so.2. After 5 checked
all-reduces each rank makes one more call, and the two calls disagree:
  count        rank 1 all-reduces half as many elements
  facing-roots a broadcast where each rank names the other as the root,
               so both wait to receive and no byte moves (the call probe)
Each rank then reads the result. A pass: neither rank ever reads a result
(prints "COMPLETED"), both processes end with an error within --bound
seconds, and HetCCL's log of each names both calls ("op #6: rank 0
called ... but rank 1 called ..."). A call that completes is a silent wrong result.

Usage: python3 torch_call_mismatch.py --hetccl-lib PATH/libnccl.so.2
           --nccl-library PATH/libnccl.so.2 [--only CASE,...] --log-dir DIR
Prints one line per case ("MISMATCH name: PASS|FAIL ...") and exits 0
when every case passed. Run with --rank to be one of a case's ranks.
"""
import argparse
import datetime
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ELEMENTS = 1 << 16
KINDS = ("count", "facing-roots")
TRANSPORTS = ("shm", "tcp")


def rank_main(kind):
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device,
                            timeout=datetime.timedelta(seconds=60))
    x = torch.empty(ELEMENTS, device=device)
    for i in range(5):
        x.fill_(float(rank + 1 + i))
        dist.all_reduce(x)
        assert x[0].item() == 3 + 2 * i, "a checked all-reduce went wrong"
    print(f"READY rank={rank}", flush=True)
    if kind == "count":
        dist.all_reduce(x[: ELEMENTS // 2] if rank == 1 else x)
    else:
        dist.broadcast(x, src=1 - rank)
    value = x[0].item()  # waits for the call: never, if it failed
    print(f"COMPLETED rank={rank} value={value}", flush=True)
    dist.destroy_process_group()
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_case(args, kind, transport):
    port = free_port()
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": args.hetccl_lib,
        "HETCCL_NCCL_LIBRARY": args.nccl_library,
        "HETCCL_DOMAINS": "split:2",
        "NCCL_NVLS_ENABLE": "0",
        "PYTHONUNBUFFERED": "1",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": "1000",
    })
    env.pop("HETCCL_TIMEOUT", None)
    if transport == "shm":
        env["HETCCL_TRANSPORT"] = "shm"
        env.pop("HETCCL_HOSTID", None)
    else:
        env["HETCCL_TRANSPORT"] = "auto"
        env["HETCCL_HOSTID"] = "A,B"
    name = f"{kind}-{transport}"
    logs, procs = [], []
    start = time.monotonic()
    for rank in (0, 1):
        log = Path(args.log_dir) / f"mismatch-{name}-rank{rank}.log"
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--rank", kind],
            env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)),
            stdout=log.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True))
    ended = {}
    while len(ended) < 2 and time.monotonic() - start < args.bound + 60:
        for rank, proc in enumerate(procs):
            if rank not in ended and proc.poll() is not None:
                ended[rank] = time.monotonic()
        time.sleep(0.05)
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    texts = [log.read_text(errors="replace") for log in logs]
    problems = []
    ready = []
    for rank, text in enumerate(texts):
        ready_at = re.search(r"READY rank=", text)
        ready.append(ready_at is not None)
        if "COMPLETED" in text:
            problems.append(f"rank {rank} read a result of the call")
        if rank not in ended:
            problems.append(f"rank {rank} still ran after "
                            f"{args.bound + 60:.0f} s")
        elif procs[rank].returncode == 0:
            problems.append(f"rank {rank} exited 0")
        if not re.search(r"op #\d+: rank \d called .* but rank \d called",
                         text):
            problems.append(f"rank {rank}'s log does not name both calls")
    if not all(ready):
        problems.append("the ranks did not get through the checked "
                        "all-reduces")
    seconds = max(ended.values()) - start if len(ended) == 2 else None
    if seconds is not None and seconds > args.bound:
        problems.append(f"the ranks ended only after {seconds:.1f} s")
    named = re.search(r"(op #\d+: rank \d called .* but rank \d called [^\n]*)",
                      texts[0])
    detail = named.group(1)[:200] if named else ""
    result = "FAIL" if problems else "PASS"
    ended_text = f"{seconds:.1f} s" if seconds is not None else "-"
    print(f"MISMATCH {name}: {result} (both ended {ended_text} after start; "
          f"{'; '.join(problems) or detail})", flush=True)
    return not problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", choices=KINDS,
                        help="be one rank of a case (the driver's children)")
    parser.add_argument("--hetccl-lib")
    parser.add_argument("--nccl-library")
    parser.add_argument("--log-dir", default="/tmp")
    parser.add_argument("--only", default="")
    parser.add_argument("--bound", type=float, default=45,
                        help="seconds from start to both ranks' end")
    args = parser.parse_args()
    if args.rank:
        return rank_main(args.rank)
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    passed = True
    for kind in KINDS:
        for transport in TRANSPORTS:
            if only and f"{kind}-{transport}" not in only:
                continue
            passed = run_case(args, kind, transport) and passed
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
