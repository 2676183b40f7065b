#!/usr/bin/env python3
"""hetccl-sim end to end: every collective on 3 uneven domains, its text
and its --json lines (one per collective and size, with the fields issue
#32 names, consistent with each other), the cost model's choice with
--cost-model (and --one-shot-max winning over it), and a bad option
refused.

  check_sim_tool.py HETCCL_SIM"""
import json
import os
import subprocess
import sys
import tempfile

COLLECTIVES = ["allreduce", "allgather", "reducescatter", "broadcast",
               "reduce", "alltoall", "sendrecv"]


def main():
    sim = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "sim.json")
        run = subprocess.run(
            [sim, "--domains", "3", "--hosts", "2", "--gpus", "2",
             "--library", "nccl,rccl,host", "-x", "all", "-b", "1K",
             "-e", "1M", "-f", "32", "--json", path],
            capture_output=True, text=True, timeout=120, check=True)
        assert "12 ranks, 6 hosts" in run.stdout, run.stdout
        lines = [json.loads(line) for line in open(path)]
    sizes = sorted({o["size"] for o in lines})
    assert len(sizes) == 3, sizes
    assert [o["collective"] for o in lines] == [
        c for c in COLLECTIVES for _ in sizes], lines
    for o in lines:
        for key in ("size", "time_us", "busbw_GBps", "algbw_GBps", "ideal_us",
                    "messages_per_rank_max", "scratch_bytes_max",
                    "pinned_bytes_max", "peers_per_rank_max", "busiest"):
            assert key in o, (key, o)
        assert o["time_us"] > 0 and o["ideal_us"] > 0, o
        assert o["ranks"] == 12 and o["domains"] == 3 and o["hosts"] == 6, o
        # algbw is the size over the time (GB/s, GB = 1e9 bytes).
        algbw = o["size"] / (o["time_us"] * 1e-6) / 1e9
        assert abs(algbw - o["algbw_GBps"]) <= 1e-3 * algbw + 1e-4, o
        assert o["messages_per_rank_max"] >= 1, o
    for extra, says in (([], "all-reduce: one-shot up to "),
                        (["--one-shot-max", "8K"],
                         "all-reduce: one-shot up to 8K, then chunks of")):
        tuned = subprocess.run(
            [sim, "--cost-model", "--domains", "2", "--hosts", "2",
             "--gpus", "4", "-b", "64K", "-e", "64K"] + extra,
            capture_output=True, text=True, timeout=60, check=True)
        line = next(l for l in tuned.stdout.splitlines()
                    if l.startswith("# cost model: "))
        assert says in line and "; broadcast: one-shot up to " in line, line
    bad = subprocess.run([sim, "--domains", "0"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2, bad
    assert "--domains needs" in bad.stderr, bad.stderr
    print(f"hetccl-sim: {len(lines)} JSON lines checked")


if __name__ == "__main__":
    main()
