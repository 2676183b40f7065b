#!/usr/bin/env python3
"""Cross-host busbw as a fraction of the link it crosses, in the same run.

HetCCL's path between hosts (the staged GPU engine over a link, the host
engine for CPU ranks) should carry what the link carries. This measures
both on one machine, 2 ranks as 2 pretend hosts (HETCCL_HOSTID=A,B, every
byte over the transport, tcp over loopback by default), in alternating
rounds:

- the yardstick: `link-bandwidth` one way and both ways at once (each way;
  a 2-rank exchange loads the link both ways, and busbw is a rate each way),
  with the tool's 4 transfers in flight, and both ways with one in flight
  (as one collective moves one buffer at a time: the figure beside);
- `hetccl-perf -np 2` with CPU ranks (HETCCL_FORCE_CPU=1, -D 0,1) and, where
  the build has the CUDA module and the machine a GPU, GPU ranks on one GPU
  (-D 0,1): the collectives' busbw, out of place by default, float32
  sum. A kind with ":threads" (`--kinds gpu,gpu:threads`) runs the same
  ranks as threads of one process (`hetccl-perf -t`): one GPU context,
  so two ranks on one GPU no longer take turns between processes (by
  default GPU ranks run both ways).

Every figure is reported per round and as the median of the rounds, with
the share of the CPUs' time that the hypervisor gave to others during
each round (steal, from /proc/stat: on a shared virtual machine the noise
behind a wide spread of rounds); each
collective's median busbw is divided by the median two-way link figure of
the same variant and size (the fraction #36 targets: 0.9), and, beside it
in brackets, by the two-way figure with one transfer in flight, and the
median of each round's busbw over that round's two-way link (paired: a
spell of the machine's that slows both drops out). A variant
(--variant NAME:VAR=VALUE,...) runs the link and the collectives with those
variables set, so one call compares settings of the transport or engine
side by side. A table beside the fractions gives the share of each op's
time its launches held the calling thread (`enqueue_us` / `time_us`; a
GPU rank's launch can wait for room in the GPU's queues). --ranks 4 runs 2 domains of 2 ranks on 2 pretend hosts
(A,A,B,B, -D 0,0,1,1) against `link-bandwidth --ranks 4` (2 links at
once); its GPU ranks need 2 GPUs (NVIDIA's NCCL refuses two ranks of one
domain on one GPU).

Writes a markdown record (commands, machine, tables, raw JSON) to --out or
bench/results/cross-host-<date>.md; prints "MISSED TARGET" for each
fraction below --target and a "KEY" line. The exit status is 1 if a run
failed.

    python3 bench/cross_host.py --build-dir build [--kinds cpu,gpu]
        [--sizes 64M,256M] [--rounds 3] [--variant NAME:VAR=V,...]
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common as common  # noqa: E402  (the shared helpers, beside us)

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast",
               "sendrecv")
# "two-way-w1": both ways, one transfer in flight each way, as one
# collective moves its buffer; "two-way" keeps link-bandwidth's default
# window (4 in flight), the stricter yardstick the target is set against.
LINK_MODES = ("one-way", "two-way", "two-way-w1")


def gpu_present():
    lines = common.first_lines(["nvidia-smi", "-L"], 4)
    return any(line.startswith("GPU ") for line in lines)


def cuda_module_built(build_dir):
    return any(Path(build_dir).rglob("libhetccl-cuda.so*"))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(common.REPO / "build"))
    parser.add_argument("--kinds", help="cpu, gpu or both, each also as "
                        "KIND:threads (default: cpu, and gpu and gpu:threads "
                        "where a GPU and the CUDA module are found)")
    parser.add_argument("--sizes", default="64M,256M")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("--ranks", type=int, default=2, choices=(2, 4))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", type=common.parse_variant,
                        action="append",
                        help="NAME:VAR=VALUE,... (repeatable; default: one "
                        "variant, 'default', with nothing set)")
    parser.add_argument("--transport", default="tcp")
    parser.add_argument("--placement", default="out",
                        choices=("out", "in", "both"))
    parser.add_argument("--link-bytes", default="4G",
                        help="bytes per size of each link run")
    parser.add_argument("-w", "--warmup", type=int, default=2)
    parser.add_argument("-n", "--iters", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds allowed for one run")
    parser.add_argument("--deadline", type=float,
                        help="seconds after which no further run starts "
                        "(the report is still written)")
    parser.add_argument("--log-dir")
    parser.add_argument("--out", help="report path (default: bench/results/"
                        "cross-host-<date>.md)")
    args = parser.parse_args()
    args.sizes = [common.parse_size(s) for s in args.sizes.split(",")]
    args.collectives = args.collectives.split(",")
    if args.kinds:
        args.kinds = args.kinds.split(",")
        for kind in args.kinds:
            ranks_kind(kind)
    else:
        args.kinds = ["cpu"]
        if gpu_present() and cuda_module_built(args.build_dir):
            args.kinds += ["gpu", "gpu:threads"]
    args.variant = args.variant or [("default", {})]
    return args


class Results:
    """Every figure of the run: (variant, what, size) -> {round: value},
    where `what` is a link mode or (kind, collective, placement),
    placement "out" or "in"."""

    def __init__(self):
        self.values = {}
        self.raw = []
        self.steal = {}  # variant -> the steal % of each round, or None

    def add(self, variant, what, size, round_index, value):
        self.values.setdefault((variant, what, size), {})[round_index] = value

    def median(self, variant, what, size):
        values = self.rounds(variant, what, size)
        return statistics.median(values) if values else None

    def rounds(self, variant, what, size):
        by_round = self.values.get((variant, what, size), {})
        return [by_round[r] for r in sorted(by_round)]

    def paired(self, variant, what, yardstick, size):
        """The median over rounds of `what` / `yardstick` of the same
        round: the machine's slower and faster spells, which move both,
        drop out."""
        ours = self.values.get((variant, what, size), {})
        theirs = self.values.get((variant, yardstick, size), {})
        ratios = [ours[r] / theirs[r] for r in ours if theirs.get(r)]
        return statistics.median(ratios) if ratios else None


def hosts(ranks):
    return "A,B" if ranks == 2 else "A,A,B,B"


def size_factor(sizes):
    """hetccl-perf's -f for `sizes`, which must each be the same multiple
    of the one before (-b the smallest, -e the largest)."""
    ordered = sorted(set(sizes))
    factors = {b // a for a, b in zip(ordered, ordered[1:])}
    if any(b % a for a, b in zip(ordered, ordered[1:])) or len(factors) > 1:
        common.die(f"--sizes {sizes}: each size must be the same multiple "
                   "of the one before (hetccl-perf -f)")
    return max(2, *factors) if factors else 2


def ranks_kind(kind):
    """("cpu" or "gpu", the hetccl-perf flag that starts the ranks) of a
    --kinds entry: "gpu:threads" runs them as threads of one process."""
    runtime, _, mode = kind.partition(":")
    if runtime not in ("cpu", "gpu") or mode not in ("", "threads"):
        common.die(f"--kinds: {kind} is not cpu or gpu, with :threads or not")
    return runtime, "-t" if mode else "-np"


def perf_run(args, exe, variant, changes, kind, log_dir, round_index):
    stem = f"perf-{variant}-{kind.replace(':', '-')}-r{round_index}"
    json_path = log_dir / f"{stem}.json"
    runtime, start_ranks = ranks_kind(kind)
    # Rank r with rank r + N/2: the pairs link-bandwidth --ranks N loads.
    domains = "0,1" if args.ranks == 2 else "0,0,1,1"
    command = [str(exe), start_ranks, str(args.ranks), "-D", domains,
               "-x", ",".join(args.collectives), "-d", "float32", "-o", "sum",
               "--check", "0", "--placement", args.placement,
               "-b", str(min(args.sizes)), "-e", str(max(args.sizes)),
               "-f", str(size_factor(args.sizes)),
               "-w", str(args.warmup), "-n", str(args.iters),
               "--json", str(json_path), "--timeout", str(args.timeout)]
    env = {"HETCCL_HOSTID": hosts(args.ranks),
           "HETCCL_TRANSPORT": args.transport}
    if runtime == "cpu":
        env["HETCCL_FORCE_CPU"] = "1"
    env.update(changes)
    return common.PerfRun(f"{kind} {variant} round {round_index}", command,
                          env, json_path, log_dir / f"{stem}.log")


def run_link(results, args, start, variant, changes, log_dir, round_index,
             failures, commands):
    for mode in LINK_MODES:
        if common.remaining(start, args.deadline) < 10:
            failures.append(f"link {mode} {variant}: not run, deadline")
            return
        stem = log_dir / f"link-{variant}-{mode}-r{round_index}"
        rates, shown = common.link_bandwidth(
            args.build_dir, args.transport, args.sizes, f"{stem}.json",
            f"{stem}.log", args.timeout, two_way=mode != "one-way",
            ranks=args.ranks, total=args.link_bytes, env_changes=changes,
            window=1 if mode == "two-way-w1" else None)
        if round_index == 1:
            commands.append(shown)
        if not rates:
            failures.append(f"link {mode} {variant} round {round_index}: "
                            f"no result (log {stem}.log)")
        for size, rate in rates.items():
            results.add(variant, mode, size, round_index, rate)
            results.raw.append({"link": mode, "bytes": size, "GBps": rate,
                                "variant": variant, "round": round_index})


def run_perf(results, run, args, start, kind, variant, round_index,
             failures):
    if common.remaining(start, args.deadline) < 10:
        failures.append(f"{run.label}: not run, deadline")
        return
    run.run(args.timeout + 30)
    runtime = "host" if ranks_kind(kind)[0] == "cpu" else "cuda"
    try:
        run.require(runtime, 2, args.ranks)
    except common.RunFailure as failure:
        failures.append(str(failure))
        return
    for record in run.records:
        if record.get("wrong"):
            failures.append(f"{run.label}: {record['coll']} at "
                            f"{record['bytes']} B had wrong results")
        what = (kind, record["coll"], placement_of(record))
        results.add(variant, what, record["bytes"], round_index,
                    record["busbw_GBps"])
        if record.get("time_us"):
            results.add(variant, ("enqueue",) + what, record["bytes"],
                        round_index, record["enqueue_us"] / record["time_us"])
        results.raw.append(dict(record, variant=variant, kind=kind))


def measure(args, log_dir):
    build = Path(args.build_dir)
    if not (build / "bench" / "link-bandwidth").is_file():
        common.die(f"{build}/bench/link-bandwidth is not built")
    perf_exe = common.perf_binary(build)
    results, failures, commands = Results(), [], []
    start = time.monotonic()
    for round_index in range(1, args.rounds + 1):
        # Alternate the order, so that no variant always runs first.
        order = args.variant if round_index % 2 else args.variant[::-1]
        for variant, changes in order:
            before = common.cpu_times()
            run_link(results, args, start, variant, changes, log_dir,
                     round_index, failures, commands)
            for kind in args.kinds:
                run = perf_run(args, perf_exe, variant, changes, kind,
                               log_dir, round_index)
                run_perf(results, run, args, start, kind, variant,
                         round_index, failures)
                if round_index == 1:
                    commands.append(run.shown)
            results.steal.setdefault(variant, []).append(
                common.steal_percent(before, common.cpu_times()))
    return results, failures, commands


def placement_of(record):
    return "in" if record.get("inplace") else "out"


def placements(args):
    """The placements measured, each in rows of its own: an op out of
    place makes copies that one in place does not."""
    return {"out": ["out"], "in": ["in"], "both": ["out", "in"]}[
        args.placement]


def row_name(coll, placement):
    return coll if placement == "out" else f"{coll} (in place)"


def key_name(variant, kind, coll, placement):
    name = f"{variant}/{kind}/{coll}"
    return name if placement == "out" else f"{name}:in"


def figure(values):
    return " / ".join(f"{v:.2f}" for v in values) if values else "-"


def tables(args, results):
    """The markdown tables, and the fractions below the target."""
    parts, misses = [], []
    for variant, changes in args.variant:
        shown = ", ".join(f"{k}={v}" for k, v in changes.items()) or \
            "nothing set"
        parts += [f"### Variant `{variant}` ({shown})", "",
                  "| | " + " | ".join(common.format_bytes(s)
                                      for s in args.sizes) + " |",
                  "|---|" + "---:|" * len(args.sizes)]
        for mode in LINK_MODES:
            cells = [f"{figure(results.rounds(variant, mode, s))}"
                     for s in args.sizes]
            parts.append(f"| link {mode} GB/s (rounds) | " +
                         " | ".join(cells) + " |")
        steal = " / ".join("?" if p is None else f"{p:.1f}"
                           for p in results.steal.get(variant, []))
        parts += ["", f"CPU time the hypervisor gave to others (steal) "
                  f"per round, %: {steal or '-'}"]
        parts += ["", "busbw GB/s per round, then median / two-way link "
                  "median of the same size (in brackets: / the two-way link "
                  "with one transfer in flight, and the median over rounds "
                  "of busbw / the same round's two-way link, paired):", "",
                  "| ranks | collective | " + " | ".join(
                      common.format_bytes(s) for s in args.sizes) + " |",
                  "|---|---|" + "---|" * len(args.sizes)]
        for kind, coll, placement in rows(args, results, variant):
            what = (kind, coll, placement)
            cells = []
            for size in args.sizes:
                busbw = results.median(variant, what, size)
                link = results.median(variant, "two-way", size)
                rounds = figure(results.rounds(variant, what, size))
                if busbw is None or not link:
                    cells.append(rounds)
                    continue
                fraction = busbw / link
                single = results.median(variant, "two-way-w1", size)
                beside = [f"{busbw / single:.2f}x"] if single else []
                paired = results.paired(variant, what, "two-way", size)
                if paired is not None:
                    beside.append(f"{paired:.2f}x paired")
                shown = f" ({'; '.join(beside)})" if beside else ""
                cells.append(f"{rounds}: **{fraction:.2f}x**{shown}")
                if fraction < args.target:
                    misses.append(
                        f"{variant}: {kind} ranks "
                        f"{row_name(coll, placement)} "
                        f"{common.format_bytes(size)}: {busbw:.2f} GB/s "
                        f"= {fraction:.2f}x of the two-way link "
                        f"({link:.2f}), target {args.target}")
            parts.append(f"| {kind} | {row_name(coll, placement)} | " +
                         " | ".join(cells) + " |")
        parts += [""] + enqueue_table(args, results, variant)
    return parts, misses


def enqueue_table(args, results, variant):
    """How much of each op's time its launches held the calling thread
    (hetccl-perf's enqueue_us over time_us, the launches of a round
    timed back to back): a launch that waits for room in the GPU's
    queues shows here, not in busbw."""
    parts = ["Share of the op's time spent enqueueing it, median over "
             "rounds:", "",
             "| ranks | collective | " + " | ".join(
                 common.format_bytes(s) for s in args.sizes) + " |",
             "|---|---|" + "---:|" * len(args.sizes)]
    for kind, coll, placement in rows(args, results, variant):
        what = ("enqueue", kind, coll, placement)
        cells = []
        for size in args.sizes:
            share = results.median(variant, what, size)
            cells.append("-" if share is None else f"{share:.2f}")
        parts.append(f"| {kind} | {row_name(coll, placement)} | " +
                     " | ".join(cells) + " |")
    return parts + [""]


def rows(args, results, variant):
    """(kind, collective, placement) of every row with a figure (a
    send/recv has no in-place form)."""
    return [(kind, coll, placement)
            for kind in args.kinds for coll in args.collectives
            for placement in placements(args)
            if any(results.rounds(variant, (kind, coll, placement), size)
                   for size in args.sizes)]


def key_line(args, results):
    items = []
    for variant, _ in args.variant:
        size = max(args.sizes)
        link = results.median(variant, "two-way", size)
        for kind, coll, placement in rows(args, results, variant):
            busbw = results.median(variant, (kind, coll, placement), size)
            if busbw is not None and link:
                items.append(f"{key_name(variant, kind, coll, placement)}="
                             f"{busbw / link:.2f}")
    return "KEY cross-host fractions of the two-way link at " \
        f"{common.format_bytes(max(args.sizes))}: " + (" ".join(items) or
                                                      "none")


def main():
    args = parse_args()
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="cross-host-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    results, failures, commands = measure(args, log_dir)
    parts, misses = tables(args, results)
    path = common.report_path(args.out, "cross-host")
    facts = [("date", datetime.datetime.now().isoformat(timespec="seconds")),
             ("CPU", f"{common.cpu_model()}, {len(os.sched_getaffinity(0))} "
              "cores available"),
             ("HetCCL commit", common.hetccl_commit()),
             ("load average at start", common.load_average())]
    if any(ranks_kind(kind)[0] == "gpu" for kind in args.kinds):
        facts.append(("GPUs", "; ".join(common.first_lines(
            ["nvidia-smi", "-L"], 4))))
    report = [f"# Cross-host busbw against the link ({args.ranks} ranks, "
              f"{args.transport}, {args.rounds} rounds)", ""]
    report += [f"- {name}: {value}" for name, value in facts] + [""]
    report += ["Commands (round 1; later rounds the same, the variants in "
               "alternating order):", "", "```"] + commands + ["```", "",
                                                               common.environment_note(), ""]
    report += common.summary_section(
        failures, misses, f"Below {args.target}x of the two-way link:",
        f"Every fraction at least {args.target}x.")
    report += parts + ["## Raw JSON", "", "```"]
    report += [common.json_line(r) for r in results.raw] + ["```", ""]
    common.write_report_file(path, report)
    text = "\n".join(parts)
    return common.log_outcome([text], misses, failures,
                              key_line(args, results), path,
                              time.monotonic() - began)


if __name__ == "__main__":
    sys.exit(main())
