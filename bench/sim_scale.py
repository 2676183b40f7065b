#!/usr/bin/env python3
"""Issue #32's scale figures: hetccl-sim on clusters of 2 to 8 domains.

Runs `hetccl-sim --cost-model` for each cluster (D domains alternating
NCCL and RCCL, H hosts of 8 GPUs per domain, one 400 Gb/s NIC per GPU) and
collective, from 4 bytes to 4 GB, and writes a markdown record: per
collective and domain count a table whose rows are sizes and whose columns
are the clusters, each cell the yardstick over the simulated time, the
most transfers any rank made and the most scratch any rank's plan asked
for; then how transfers and scratch per rank grow with the ranks; then the
raw JSON lines (one fenced block per cluster and collective), from which
`bench/charts.py --sim RECORD` redraws the charts.

All-to-all makes a transfer per pair of ranks per round, so it runs only
on clusters of up to --alltoall-max-ranks ranks (the simulator would take
minutes beyond).

    python3 bench/sim_scale.py --build-dir build [--out FILE]
        [--clusters 2:1,4:4] [--max-size 4G]

Prints a "KEY" line (each cluster's all-reduce at the largest size, as
yardstick / time) and the charts.py command that draws the charts.
"""

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common as common  # noqa: E402  (the shared helpers, beside us)

# (domains, hosts per domain): 16 to 1,024 GPUs on 2, 4 and 8 domains.
CLUSTERS = ((2, 1), (2, 8), (2, 64), (4, 1), (4, 4), (4, 32), (8, 1), (8, 16))
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall",
               "sendrecv")


def size_text(size):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def parse_clusters(text):
    clusters = []
    for item in text.split(","):
        domains, hosts = item.split(":")
        clusters.append((int(domains), int(hosts)))
    return tuple(clusters)


def simulate(sim, cluster, collective, max_size, json_path):
    domains, hosts = cluster
    libraries = ",".join(("nccl", "rccl") * 4)
    command = [sim, "--cost-model", "--domains", str(domains), "--hosts",
               str(hosts), "--gpus", "8", "--library", libraries, "-x",
               collective, "-b", "4", "-e", max_size, "-f", "32", "--json",
               str(json_path)]
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    rows = [json.loads(line) for line in json_path.read_text().splitlines()]
    return command, seconds, rows


def requested_sizes(max_size):
    """The sizes of -b 4 -e MAX -f 32, as the simulator steps them."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    top = (int(max_size[:-1]) * units[max_size[-1]]
           if max_size[-1] in units else int(max_size))
    sizes, size = [], 4
    while size <= top:
        sizes.append(size)
        size *= 32
    return sizes


def table(collective, domains, runs, all_clusters, requested):
    clusters = [c for c in all_clusters
                if c[0] == domains and (c, collective) in runs]
    if not clusters:
        return []
    ranks = [runs[(c, collective)][0]["ranks"] for c in clusters]
    lines = [f"**{collective}, {domains} domains** (cells: yardstick / time, "
             "transfers per rank (max), scratch per rank (max))", "",
             "| size | " + " | ".join(f"{r} ranks" for r in ranks) + " |",
             "|---|" + "---|" * len(ranks)]
    for i, size in enumerate(requested):
        cells = []
        for c in clusters:
            row = runs[(c, collective)][i]
            cells.append(f"{row['ideal_us'] / row['time_us']:.2f}, "
                         f"{row['messages_per_rank_max']}, "
                         f"{size_text(row['scratch_bytes_max'])}")
        lines.append(f"| {size_text(size)} | " + " | ".join(cells) + " |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(common.REPO / "build"))
    parser.add_argument("--clusters", type=parse_clusters, default=CLUSTERS,
                        help="DOMAINS:HOSTS,... (default: 16 to 1,024 GPUs "
                        "on 2, 4 and 8 domains)")
    parser.add_argument("--max-size", default="4G")
    parser.add_argument("--alltoall-max-ranks", type=int, default=256)
    parser.add_argument("--out", help="report path (default: bench/results/"
                        "sim-scale-4g-<date>.md)")
    args = parser.parse_args()
    sim = str(Path(args.build_dir) / "tools" / "hetccl-sim")
    today = datetime.date.today().isoformat()
    out = Path(args.out or common.REPO / "bench" / "results" /
               f"sim-scale-4g-{today}.md")
    runs, commands, slowest = {}, [], []
    with tempfile.TemporaryDirectory() as scratch:
        for cluster in args.clusters:
            for collective in COLLECTIVES:
                if (collective == "alltoall" and
                        cluster[0] * cluster[1] * 8 > args.alltoall_max_ranks):
                    continue
                path = Path(scratch) / f"d{cluster[0]}-h{cluster[1]}-{collective}.json"
                command, seconds, rows = simulate(sim, cluster, collective,
                                                  args.max_size, path)
                common.log(f"{path.name}: {seconds:.1f} s")
                runs[(cluster, collective)] = rows
                commands.append(command)
                slowest.append((seconds, path.stem))
    slowest.sort(reverse=True)
    report = [
        f"# hetccl-sim: HetCCL's plans from 4 B to {args.max_size}B on "
        f"{len(args.clusters)} clusters ({today})", "",
        "Written by `python3 bench/sim_scale.py --build-dir build`. Model "
        "figures, not measurements of hardware (tools/sim/README.md says what "
        "the simulator models); transfers and scratch per rank are what the "
        "real plans do.", "",
        f"- Tree: {common.hetccl_commit()}; {common.cpu_model()}.",
        "- Clusters: D domains alternating NCCL and RCCL (the defaults), H "
        "hosts of 8 GPUs per domain, one 400 Gb/s NIC per GPU, 2 us per "
        "transfer, float32, each size with the cost model's choices. Rows "
        "are the sizes asked for: below one element per rank (4 bytes times "
        "the ranks) a cluster runs one element per rank.",
        "- One command per cluster and collective, e.g.:", "",
        "      " + " ".join(commands[0][:-1]).replace(
            sim, "build/tools/hetccl-sim") + " d2-h1-allreduce.json",
        "",
        "- Simulator time (wall): "
        + ", ".join(f"{name} {s:.0f} s" for s, name in slowest[:4])
        + f"; {len(commands)} commands, {sum(s for s, _ in slowest):.0f} s "
        "in all.", "",
        "\"yardstick / time\": tools/sim/ideal.h's yardstick (the slowest "
        "domain's library doing its share plus the least bytes that must "
        "cross domains over the NICs that can carry them) over the simulated "
        "time; above 1, the plan overlapped the two parts.", ""]
    for collective in COLLECTIVES:
        for domains in sorted({c[0] for c in args.clusters}):
            report += table(collective, domains, runs, args.clusters,
                            requested_sizes(args.max_size))
    report += ["## Raw JSON (hetccl-sim --json)", ""]
    for (cluster, collective), rows in runs.items():
        report += [f"# d{cluster[0]}-h{cluster[1]}-{collective}", "```json"]
        report += [json.dumps(row) for row in rows] + ["```", ""]
    out.write_text("\n".join(report))
    common.log(f"wrote {out}; charts: python3 bench/charts.py --sim {out}")
    largest = {c: rows[-1] for (c, coll), rows in runs.items()
               if coll == "allreduce"}
    common.log("KEY all-reduce yardstick / time at the largest size: " + " ".join(
        f"d{c[0]}-h{c[1]}={row['ideal_us'] / row['time_us']:.2f}"
        for c, row in largest.items()))


if __name__ == "__main__":
    main()
