#!/usr/bin/env python3
"""Two hosts emulated on 2 GPUs: HetCCL's tcp links beside NCCL's sockets.

On one machine with 2 NVIDIA GPUs, in one run (float32, sum, out of place,
busbw as nccl-tests, GB = 1e9 bytes):

a. 2 ranks as 2 pretend hosts. HetCCL: `hetccl-perf -np 2 -D split:2` with
   HETCCL_HOSTID=A,B, so the two GPUs are different hosts to it and every
   byte crosses its tcp transport (HETCCL_TRANSPORT=auto picks tcp between
   hosts; HETCCL_SOCKET_IFNAME=lo, 4 sockets per link, each on its own
   progress thread: HETCCL_TCP_THREADS=4 HETCCL_TCP_SOCKETS=4, as in the
   script's earlier records; the default grows with the cores). NVIDIA's NCCL: the same tool with `--nccl-library`, forced onto
   its socket network (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
   NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo), once per entry of
   NCCL_SOCKET_VARIANTS: its default socket settings, HetCCL's (4 threads x
   1 socket) and, when time allows, 1 thread x 4 sockets. allreduce,
   allgather, reducescatter, broadcast and sendrecv at 64M and 256M.
   Ratios HetCCL / NCCL-default and HetCCL / NCCL-tuned (4x1); target >= 1.0
   against both at every point. Beside them, HetCCL as a fraction of its
   tcp link loaded both ways (`link-bandwidth --two-way`, once per round,
   the best; where the build has bench/: -DHETCCL_BUILD_BENCH=ON), the
   yardstick of bench/cross_host.py.
b. 4 ranks, 2 per GPU (rank r on GPU r % 2), `-D 0,0,1,1`: HetCCL with
   HETCCL_HOSTID=A,A,B,B (each domain one pretend host whose 2 GPUs run
   NCCL, tcp between the hosts) and with A,B,C,D: all-reduce busbw at 256M
   and its ratio to the 2-rank all-reduce of the same run; target >= 1.5x
   for A,A,B,B. NVIDIA's NCCL cannot run this (it refuses two ranks on one
   GPU in a communicator).
c. For reference, NVIDIA's NCCL as it is (NVLink), 2 ranks, all-reduce at
   256M.

The runs are interleaved: --rounds rounds (default 2), each running HetCCL
and every NCCL socket variant in turn (the order reversed in even rounds),
then the 4-rank runs; the NVLink reference runs once. Each table cell is the
best busbw of its rounds. HetCCL runs log at INFO (INIT,NET,ENV): a HetCCL
run counts only if every rank logged tcp links and no other kind; an NCCL
socket run only if NCCL named NET/Socket as its transport (when it named
any).

Every hetccl-perf run's output goes to --log-dir. A failed run is reported
(FAILED RUN) and the others go on; the exit status is 1 if any run failed.
Missed targets are printed (MISSED TARGET) but do not change the exit
status. Writes a markdown record (commands, machine, date, commit, tables,
raw JSON) to --out or bench/results/gpu-network-compare-<date>.md.

Time on 2 H200s: about 5 s of start-up per hetccl-perf run plus the
transfers; 2 rounds of 3 or 4 two-rank runs and 2 four-rank runs, and the
NVLink run: about 2.5 minutes; --deadline drops the optional runs first
(the 1x4 variant, then the later rounds).
"""

import argparse
import datetime
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common as common  # noqa: E402  (the shared helpers, beside us)

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast",
               "sendrecv")
SIZES = (64 << 20, 256 << 20)
LARGE = 256 << 20
TARGET_RATIO = 1.0     # HetCCL tcp / each targeted NCCL socket variant
TARGET_SCALING = 1.5   # 4 ranks (A,A,B,B) / 2 ranks, all-reduce at 256M

# NVIDIA's NCCL over sockets on one machine: its network path between the
# GPUs (the anchor of a link between hosts), through loopback.
NCCL_SOCKET_BASE = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1",
                    "NCCL_NET": "Socket", "NCCL_SOCKET_IFNAME": "lo"}
SOCKET_KNOBS = ("NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD")
# The NCCL socket settings measured: (key, title, settings, targeted,
# optional). Settings not given are removed from the environment (NCCL's
# defaults). "targeted": HetCCL must reach TARGET_RATIO against it;
# "optional": run only when --deadline leaves time for it.
NCCL_SOCKET_VARIANTS = (
    ("nccl-default", "NCCL sockets, default settings", {}, True, False),
    ("nccl-4x1", "NCCL sockets, 4 threads x 1 socket (HetCCL's)",
     {"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "1"}, True,
     False),
    ("nccl-1x4", "NCCL sockets, 1 thread x 4 sockets",
     {"NCCL_SOCKET_NTHREADS": "1", "NCCL_NSOCKS_PERTHREAD": "4"}, False,
     True),
)
TUNED = "nccl-4x1"
HETCCL2 = "hetccl-tcp"
# The 4-rank HetCCL runs: (key, HETCCL_HOSTID, targeted).
FOUR_RANK_RUNS = (("hetccl-4-AABB", "A,A,B,B", True),
                  ("hetccl-4-ABCD", "A,B,C,D", False))
NVLINK = "nccl-nvlink"
DEFAULT_ESTIMATE_S = 40.0  # a run's expected seconds before one has run

# A rank of a heterogeneous communicator naming its links to the other
# domains: "... links: 0 shm, 1 tcp[; ...]", whatever the sentence before.
LINKS_LINE = re.compile(r"HETCCL INFO .*links:\s*(\d+\s+[A-Za-z].*)$")
SOCKETS_LINE = re.compile(r"NET/Socket\s*:\s*Using (\d+) threads and (\d+) "
                          r"sockets per thread")
RUNS_ON_LINE = re.compile(r"domain of (\d+) rank\(?s?\)? runs on (\w+)")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(common.REPO / "build-gpu"))
    parser.add_argument("--nccl-library",
                        help="NVIDIA's libnccl.so.2 (default: "
                        "HETCCL_NCCL_LIBRARY, else the nvidia-nccl wheel)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="interleaved rounds; each cell is the best")
    parser.add_argument("-w", "--warmup", type=int, default=3)
    parser.add_argument("-n", "--iters", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=60,
                        help="seconds allowed for one hetccl-perf run")
    parser.add_argument("--deadline", type=float,
                        help="seconds after which no further run starts "
                        "(the report is still written)")
    parser.add_argument("--log-dir")
    parser.add_argument("--out", help="report path (default: bench/results/"
                        "gpu-network-compare-<date>.md)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


# ----------------------------------------------------------------------------
# The runs.

class Planned:
    """One hetccl-perf run of the plan and what it showed."""

    def __init__(self, key, title, round_no, kind, nranks, ndomains,
                 required, run):
        self.key = key            # the configuration (several rounds)
        self.title = title
        self.round_no = round_no
        self.kind = kind          # "hetccl", "nccl-socket" or "nccl-nvlink"
        self.nranks = nranks
        self.ndomains = ndomains
        self.required = required  # runs even when later runs lose time
        self.run = run            # common.PerfRun
        self.ran = False
        self.usable = False       # its results count
        self.facts = ""           # links, transports, socket settings

    @property
    def label(self):
        return self.run.label


def perf_run(exe, args, key, round_no, nranks, collectives, sizes, extra,
             env, workdir, log_dir):
    label = f"{key}-r{round_no}"
    json_path = workdir / f"{label}.jsonl"
    command = common.perf_command(exe, nranks, collectives, min(sizes),
                                  max(sizes), args.warmup, args.iters,
                                  json_path, args.timeout, extra)
    # 64M and 256M only, not the sizes between.
    command[command.index("-f") + 1] = "4"
    return common.PerfRun(label, command, env, json_path,
                          log_dir / f"network-{label}.log")


# HetCCL's tcp geometry here: 4 threads of 1 socket each, the one NCCL's
# "4x1" variant copies and every earlier record of this script ran (its
# default now grows with the cores: 8 on these machines).
HETCCL_TCP_GEOMETRY = {"HETCCL_TCP_THREADS": "4", "HETCCL_TCP_SOCKETS": "4"}


def hetccl_env(nccl_library, hostids):
    env = {"HETCCL_NCCL_LIBRARY": nccl_library, "HETCCL_HOSTID": hostids,
           "HETCCL_TRANSPORT": "auto", "HETCCL_SOCKET_IFNAME": "lo",
           "HETCCL_DEBUG": "INFO", "HETCCL_DEBUG_SUBSYS": "INIT,NET,ENV",
           **HETCCL_TCP_GEOMETRY}
    # NCCL's socket settings stay out of HetCCL's runs (HetCCL reads
    # NCCL_SOCKET_IFNAME, and its domains' NCCL all of them).
    for name in list(NCCL_SOCKET_BASE) + list(SOCKET_KNOBS):
        env[name] = None
    return env


def plan_runs(args, exe, nccl_library, workdir, log_dir):
    """Every run in the order they run."""
    colls = ",".join(COLLECTIVES)
    nccl_debug = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}
    plans = []
    for round_no in range(1, args.rounds + 1):
        required = round_no == 1
        two_rank = [Planned(
            HETCCL2, "HetCCL tcp (2 pretend hosts)", round_no, "hetccl", 2,
            2, required,
            perf_run(exe, args, HETCCL2, round_no, 2, colls, SIZES,
                     ["-D", "split:2"], hetccl_env(nccl_library, "A,B"),
                     workdir, log_dir))]
        for key, title, settings, _, optional in NCCL_SOCKET_VARIANTS:
            env = dict(nccl_debug, **NCCL_SOCKET_BASE)
            env.update({name: settings.get(name) for name in SOCKET_KNOBS})
            env["HETCCL_HOSTID"] = None
            two_rank.append(Planned(
                key, title, round_no, "nccl-socket", 2, 1,
                required and not optional,
                perf_run(exe, args, key, round_no, 2, colls, SIZES,
                         ["--nccl-library", nccl_library], env, workdir,
                         log_dir)))
        if round_no % 2 == 0:
            two_rank.reverse()
        plans += two_rank
        for key, hostids, _ in FOUR_RANK_RUNS:
            plans.append(Planned(
                key, f"HetCCL 4 ranks, 2 per GPU, hosts {hostids}", round_no,
                "hetccl", 4, 2, required,
                perf_run(exe, args, key, round_no, 4, "allreduce", (LARGE,),
                         ["-D", "0,0,1,1"],
                         hetccl_env(nccl_library, hostids), workdir,
                         log_dir)))
        if round_no == 1:
            env = dict(nccl_debug, HETCCL_HOSTID=None)
            env.update({name: None for name in NCCL_SOCKET_BASE})
            env.update({name: None for name in SOCKET_KNOBS})
            plans.append(Planned(
                NVLINK, "NCCL as it is (NVLink)", 1, "nccl-nvlink", 2, 1,
                True,
                perf_run(exe, args, NVLINK, 1, 2, "allreduce", (LARGE,),
                         ["--nccl-library", nccl_library], env, workdir,
                         log_dir)))
    return plans


def link_counts(text):
    """{transport: links} of each "links:" line of HetCCL's INFO log."""
    lines = []
    for line in text.splitlines():
        match = LINKS_LINE.search(line)
        if not match:
            continue
        counts = {}
        for part in match[1].split(";")[0].split(","):
            words = part.split()
            if len(words) >= 2 and words[0].isdigit():
                name = re.sub(r"\W", "", words[1])
                counts[name] = counts.get(name, 0) + int(words[0])
        lines.append(counts)
    return lines


def nccl_transports(text):
    """The NCCL transports named in a log ("NET/Socket/0", "P2P/CUMEM")."""
    seen = set()
    for line in text.splitlines():
        if " via " in line:
            seen.add(line.split(" via ", 1)[1].split()[0])
    return sorted(seen)


def inspect(plan):
    """Checks that the run measured what it was meant to; sets usable and
    facts; returns the problems (empty: fine)."""
    run = plan.run
    text = Path(run.log_path).read_text(errors="replace") \
        if Path(run.log_path).exists() else ""
    problems = []
    if not run.records:
        problems.append(f"no results in {run.json_path}")
    if len(run.ranks) != plan.nranks:
        problems.append(f"the header names {len(run.ranks)} ranks, not "
                        f"{plan.nranks}")
    for rank, runtime, device, _, ndomains in run.ranks:
        if runtime != "cuda" or ndomains != plan.ndomains:
            problems.append(f"rank {rank} ran on {runtime} ({device}) in "
                            f"{ndomains} domain(s), not on cuda in "
                            f"{plan.ndomains}")
    if plan.kind == "hetccl":
        links = link_counts(text)
        tcp_only = [c for c in links if c.get("tcp", 0) > 0 and
                    sum(n for t, n in c.items() if t != "tcp") == 0]
        runs_on = sorted({f"domain of {m[1]} on {m[2]}"
                          for m in RUNS_ON_LINE.finditer(text)})
        plan.facts = (f"{len(tcp_only)}/{len(links)} ranks' links tcp only"
                      + (f"; {', '.join(runs_on)}" if runs_on else ""))
        if len(links) < plan.nranks or len(tcp_only) != len(links):
            problems.append("not every rank's cross-domain links are tcp "
                            f"(links lines: {links or 'none'}): the pretend "
                            "hosts did not take")
    else:
        transports = nccl_transports(text)
        sockets = sorted({f"{m[1]} thread(s) x {m[2]} socket(s)"
                          for m in SOCKETS_LINE.finditer(text)})
        plan.facts = "via " + (", ".join(transports) or "not logged")
        if sockets:
            plan.facts += "; " + ", ".join(sockets)
        if (plan.kind == "nccl-socket" and transports and
                not any(t.startswith("NET/Socket") for t in transports)):
            problems.append(f"NCCL used {', '.join(transports)}, not "
                            "NET/Socket")
    # A run that stopped early still measured the sizes it wrote; a run of
    # the wrong configuration measured something else.
    plan.usable = bool(run.records) and not [
        p for p in problems if not p.startswith("no results")]
    return problems


def estimate(plans, plan):
    """Seconds `plan` is expected to take: its configuration's longest run
    so far, else the longest run of as many ranks, else a default."""
    same = [p.run.seconds for p in plans if p.ran and p.key == plan.key]
    if same:
        return max(same)
    alike = [p.run.seconds for p in plans
             if p.ran and p.nranks == plan.nranks]
    return max(alike) if alike else DEFAULT_ESTIMATE_S


def measure_link(args, log_dir):
    """The yardstick: HetCCL's tcp link both ways at once (the rate each
    way, `link-bandwidth --two-way`), once per round, over loopback like
    the runs; {size: best GB/s}. Empty where the build lacks the tool
    (configure with -DHETCCL_BUILD_BENCH=ON)."""
    best_rates = {}
    for round_no in range(1, args.rounds + 1):
        rates, _ = common.link_bandwidth(
            args.build_dir, "tcp", SIZES,
            log_dir / f"link-two-way-r{round_no}.json",
            log_dir / f"link-two-way-r{round_no}.log", args.timeout,
            env_changes={"HETCCL_SOCKET_IFNAME": "lo",
                         **HETCCL_TCP_GEOMETRY})
        for size, rate in rates.items():
            best_rates[size] = max(best_rates.get(size, 0.0), rate)
    return best_rates


def run_all(args, plans, start, failures):
    for index, plan in enumerate(plans):
        left = common.remaining(start, args.deadline)
        if not plan.required:
            reserve = sum(estimate(plans, p) for p in plans[index + 1:]
                          if p.required)
            if left - reserve - estimate(plans, plan) < 10:
                common.log(f"-- {plan.label}: skipped (optional): {left:.0f} "
                           "s left, not enough for it and the required "
                           "runs still to come")
                continue
        elif left < 10:
            failures.append(f"{plan.label}: not run, --deadline reached")
            continue
        plan.run.run(min(args.timeout + 30, left))
        plan.ran = True
        reasons, tail = inspect(plan), []
        if plan.run.error:  # "<label>: exit status ...", then the log's end
            first, *tail = plan.run.error.splitlines()
            reasons.insert(0, first[len(plan.label) + 2:])
        if reasons:
            failure = f"{plan.label}: {'; '.join(reasons)}"
            failures.append("\n".join([failure] + tail))
            common.log(f"!! {failure}")


# ----------------------------------------------------------------------------
# Results.

def best(plans, key):
    """{(coll, bytes): best busbw} of the usable runs of `key`."""
    values = {}
    for plan in plans:
        if plan.key != key or not plan.usable:
            continue
        for rec in plan.run.records:
            if rec.get("inplace") or rec.get("dtype") != "float32":
                continue
            point = (rec["coll"], rec["bytes"])
            values[point] = max(values.get(point, 0.0), rec["busbw_GBps"])
    return values


def by_round(plans, key):
    """{round: {(coll, bytes): busbw}} of `key` (usable runs only)."""
    rounds = {}
    for plan in plans:
        if plan.key == key and plan.usable:
            rounds[plan.round_no] = {(r["coll"], r["bytes"]): r["busbw_GBps"]
                                     for r in plan.run.records
                                     if not r.get("inplace")}
    return rounds


def ratio(mine, theirs):
    return mine / theirs if mine is not None and theirs else None


def format_ratio(value):
    return "-" if value is None else f"{value:.2f}"


def two_rank_table(plans, link):
    """Markdown table of part a and its misses; `link` is the two-way tcp
    link's rate each way by size (the yardstick, informational here:
    bench/cross_host.py holds #36's target)."""
    keys = [HETCCL2] + [v[0] for v in NCCL_SOCKET_VARIANTS]
    titles = {HETCCL2: "HetCCL tcp"}
    titles.update({v[0]: v[0] for v in NCCL_SOCKET_VARIANTS})
    targeted = [v[0] for v in NCCL_SOCKET_VARIANTS if v[3]]
    values = {key: best(plans, key) for key in keys}
    header = ([f"{titles[k]} busbw" for k in keys] +
              [f"HetCCL / {v[0]}" for v in NCCL_SOCKET_VARIANTS] +
              ["two-way tcp link GB/s", "HetCCL / two-way link"] +
              [f"target: HetCCL / ({', '.join(targeted)}) >= "
               f"{TARGET_RATIO:g}"])
    lines = ["| collective | size | " + " | ".join(header) + " |",
             "|---|---:|" + "---:|" * (len(header) - 1) + ":---|"]
    misses = []
    for coll in COLLECTIVES:
        for size in SIZES:
            point = (coll, size)
            mine = values[HETCCL2].get(point)
            cells = [coll, common.format_bytes(size)]
            cells += [common.format_busbw(values[k].get(point)) for k in keys]
            verdict = "PASS"
            if mine is None:
                verdict = "FAIL"
                misses.append(f"HetCCL {coll} {common.format_bytes(size)}: "
                              "no result")
            for variant in NCCL_SOCKET_VARIANTS:
                theirs = values[variant[0]].get(point)
                r = ratio(mine, theirs)
                cells.append(format_ratio(r))
                if not variant[3] or mine is None:
                    continue
                if r is None:
                    verdict = "FAIL"
                    misses.append(f"HetCCL / {variant[0]} {coll} "
                                  f"{common.format_bytes(size)}: no "
                                  f"{variant[0]} result to compare with")
                elif r < TARGET_RATIO:
                    verdict = "FAIL"
                    misses.append(
                        f"HetCCL / {variant[0]} {coll} "
                        f"{common.format_bytes(size)}: {r:.2f} < "
                        f"{TARGET_RATIO:g} (HetCCL {mine:.2f}, NCCL "
                        f"{theirs:.2f} GB/s)")
            cells.append(common.format_busbw(link.get(size)))
            cells.append(format_ratio(ratio(mine, link.get(size))))
            cells.append(verdict)
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", misses


def rounds_table(plans):
    """busbw of every round of every 2-rank configuration."""
    keys = [HETCCL2] + [v[0] for v in NCCL_SOCKET_VARIANTS]
    rounds = {key: by_round(plans, key) for key in keys}
    numbers = sorted({n for r in rounds.values() for n in r})
    if not numbers:
        return "No usable run.\n"
    lines = ["| collective | size | configuration | " +
             " | ".join(f"round {n}" for n in numbers) + " |",
             "|---|---:|---|" + "---:|" * len(numbers)]
    for coll in COLLECTIVES:
        for size in SIZES:
            for key in keys:
                cells = [coll, common.format_bytes(size), key]
                cells += [common.format_busbw(
                    rounds[key].get(n, {}).get((coll, size)))
                    for n in numbers]
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def four_rank_table(plans):
    """Markdown table of parts b and c, its misses and the numbers."""
    point = ("allreduce", LARGE)
    two = best(plans, HETCCL2).get(point)
    nvlink = best(plans, NVLINK).get(point)
    lines = ["| run | ranks | HETCCL_HOSTID | domains | all-reduce busbw "
             f"at {common.format_bytes(LARGE)} (best) | usable rounds | / "
             "HetCCL 2 ranks | target |",
             "|---|---:|---|---|---:|---:|---:|:---|",
             f"| {HETCCL2} | 2 | A,B | split:2 | {common.format_busbw(two)} "
             f"| {len(by_round(plans, HETCCL2))} | 1.00 | - |"]
    misses = []
    numbers = {HETCCL2: two, NVLINK: nvlink}
    for key, hostids, targeted in FOUR_RANK_RUNS:
        value = best(plans, key).get(point)
        numbers[key] = value
        r = ratio(value, two)
        verdict = "-"
        if targeted:
            verdict = "PASS" if r is not None and r >= TARGET_SCALING \
                else "FAIL"
            if verdict == "FAIL":
                misses.append(
                    f"{key} all-reduce {common.format_bytes(LARGE)}: "
                    f"{format_ratio(r)}x the 2-rank busbw < "
                    f"{TARGET_SCALING:g}x ({common.format_busbw(value)} vs "
                    f"{common.format_busbw(two)} GB/s)")
        target = f"{verdict} (>= {TARGET_SCALING:g}x)" if targeted else "-"
        lines.append(f"| {key} | 4 | {hostids} | 0,0,1,1 | "
                     f"{common.format_busbw(value)} | "
                     f"{len(by_round(plans, key))} | {format_ratio(r)} | "
                     f"{target} |")
    lines.append(f"| {NVLINK} (reference) | 2 | - | - | "
                 f"{common.format_busbw(nvlink)} | "
                 f"{len(by_round(plans, NVLINK))} | "
                 f"{format_ratio(ratio(nvlink, two))} | - |")
    return "\n".join(lines) + "\n", misses, numbers


def runs_table(plans):
    lines = ["| run | round | exit | seconds | results | counted | what the "
             "log shows |", "|---|---:|---:|---:|---:|:---|---|"]
    for plan in plans:
        if not plan.ran:
            lines.append(f"| {plan.key} | {plan.round_no} | - | - | - | "
                         "not run | - |")
            continue
        lines.append(f"| {plan.key} | {plan.round_no} | "
                     f"{plan.run.returncode} | {plan.run.seconds:.1f} | "
                     f"{len(plan.run.records)} | "
                     f"{'yes' if plan.usable else 'no'} | {plan.facts} |")
    return "\n".join(lines) + "\n"


def key_lines(plans, numbers):
    """The "KEY ..." lines of tests/gpu/run.sh's summary."""
    mine = best(plans, HETCCL2)
    parts = []
    for variant in NCCL_SOCKET_VARIANTS:
        if not variant[3]:
            continue
        theirs = best(plans, variant[0])
        ratios = [(ratio(mine.get(p), theirs.get(p)), p)
                  for p in ((c, s) for c in COLLECTIVES for s in SIZES)]
        known = [(r, p) for r, p in ratios if r is not None]
        if known:
            r, (coll, size) = min(known)
            parts.append(f"min HetCCL/{variant[0]} {r:.2f} ({coll} "
                         f"{common.format_bytes(size)}, "
                         f"{len(known)}/{len(ratios)} points)")
        else:
            parts.append(f"HetCCL/{variant[0]} -")
    point = ("allreduce", LARGE)
    allreduce = ", ".join(
        f"{key} {common.format_busbw(best(plans, key).get(point))}"
        for key in [HETCCL2] + [v[0] for v in NCCL_SOCKET_VARIANTS])
    two = numbers.get(HETCCL2)
    four = "; ".join(
        f"{key} {common.format_busbw(numbers.get(key))} "
        f"({format_ratio(ratio(numbers.get(key), two))}x)"
        for key, _, _ in FOUR_RANK_RUNS)
    return "\n".join([
        "KEY tcp vs NCCL sockets: " + "; ".join(parts),
        f"KEY allreduce {common.format_bytes(LARGE)} busbw GB/s: {allreduce}",
        f"KEY 4 ranks allreduce {common.format_bytes(LARGE)}: {four}; "
        f"{NVLINK} {common.format_busbw(numbers.get(NVLINK))}"])


def write_report(path, args, facts, topo, plans, tables, misses, failures,
                 seconds):
    now = datetime.datetime.now().isoformat(timespec="seconds")
    variants = ["| key | settings | targeted | optional |",
                "|---|---|:---|:---|"]
    for key, _, settings, targeted, optional in NCCL_SOCKET_VARIANTS:
        shown = " ".join(f"{k}={v}" for k, v in settings.items()) or \
            "NCCL's defaults (both variables unset)"
        variants.append(f"| {key} | {shown} | {'yes' if targeted else 'no'} "
                        f"| {'yes' if optional else 'no'} |")
    parts = [
        "# Two hosts emulated on 2 GPUs: HetCCL tcp beside NCCL sockets",
        "",
        f"Run on {now} by `bench/gpu_network_compare.py` in {seconds:.0f} s "
        f"(HetCCL commit {common.hetccl_commit()}): float32 sum, out of "
        f"place, {', '.join(common.format_bytes(s) for s in SIZES)}; "
        f"hetccl-perf with {args.warmup} warm-up and {args.iters} timed "
        "iterations (time: mean of the ranks); busbw as nccl-tests (GB = "
        "1e9 bytes).",
        "",
        "HetCCL treats the 2 GPUs as 2 hosts (HETCCL_HOSTID=A,B, one domain "
        "each: `-D split:2`), so every byte crosses its tcp transport over "
        "loopback (HETCCL_TRANSPORT=auto chooses tcp between hosts; its "
        "4 sockets per link, each on its own progress thread: "
        "HETCCL_TCP_THREADS=4 HETCCL_TCP_SOCKETS=4). "
        "NVIDIA's NCCL "
        "is forced onto its socket network over loopback "
        f"({' '.join(f'{k}={v}' for k, v in NCCL_SOCKET_BASE.items())}), "
        "with the socket settings below. Both move the data GPU -> host -> "
        "socket -> host -> GPU.",
        "",
        f"**Best of {args.rounds} interleaved rounds**: each round runs "
        "HetCCL and every NCCL socket variant one after the other (the "
        "order reversed in even rounds), then the 4-rank runs; each table "
        "cell is the highest busbw of its configuration's counted rounds "
        "(the per-round numbers are below). Optional runs are dropped "
        "first when --deadline is near; a run that stopped early counts "
        "with the sizes it finished; a run whose log shows another "
        "configuration (links not tcp, NCCL not on NET/Socket, ranks not "
        "on the GPUs) does not count.",
        "", "NCCL socket variants:", ""] + variants + ["", "## Summary", ""]
    parts += common.summary_section(
        failures, misses, f"Missed targets ({len(misses)}):",
        "Every run succeeded and every target was met.")
    parts += ["## Machine", ""] + [f"- {k}: {v}" for k, v in facts]
    parts += ["", "```"] + topo + ["```", "",
                                   "## a. 2 ranks, 2 pretend hosts", "",
                                   tables["two"],
                                   "### Per round (busbw GB/s)", "",
                                   tables["rounds"],
                                   "## b, c. 4 ranks, 2 per GPU; NCCL over "
                                   "NVLink", "",
                                   "Rank r on GPU r % 2; domains 0,0,1,1: "
                                   "each domain is a pair of ranks on the 2 "
                                   "GPUs (ranks 0, 1 and ranks 2, 3), run by "
                                   "NCCL, and the domains meet over tcp. "
                                   "With A,B,C,D the 2 ranks of a domain are "
                                   "different hosts to HetCCL too.", "",
                                   tables["four"], "## Runs", "",
                                   tables["runs"], "## Commands", "",
                                   common.environment_note() + " A "
                                   "variable shown nowhere was removed "
                                   "from the environment where the script "
                                   "sets it for another run (e.g. the NCCL "
                                   "socket variables in HetCCL's runs).",
                                   "", "```"]
    parts += [plan.run.shown for plan in plans if plan.round_no == 1]
    parts += ["```", "", "Later rounds repeat these commands (their logs "
              "and JSON are named -r2, -r3, ...).", "", "## Raw numbers", "",
              "```"]
    for plan in plans:
        if plan.ran:
            parts.append(f"# {plan.label} (counted: "
                         f"{'yes' if plan.usable else 'no'})")
            parts += [common.json_line(r) for r in plan.run.records]
    parts += ["```", ""]
    common.write_report_file(path, parts)
    common.chart_hint(path)


def main():
    args = parse_args()
    start = time.monotonic()
    exe = common.perf_binary(args.build_dir)
    nccl_library = common.find_nvidia_nccl(args.nccl_library)
    facts = common.gpu_machine_facts(nccl_library)
    topo = common.topology()
    failures = []
    with tempfile.TemporaryDirectory(prefix="hetccl-gpu-network-") as tmp:
        workdir = Path(tmp)
        log_dir = Path(args.log_dir) if args.log_dir else workdir
        log_dir.mkdir(parents=True, exist_ok=True)
        plans = plan_runs(args, exe, nccl_library, workdir, log_dir)
        link = measure_link(args, log_dir)
        run_all(args, plans, start, failures)
        seconds = time.monotonic() - start
        two, misses = two_rank_table(plans, link)
        four, four_misses, numbers = four_rank_table(plans)
        misses += four_misses
        tables = {"two": two, "rounds": rounds_table(plans), "four": four,
                  "runs": runs_table(plans)}
        path = common.report_path(args.out, "gpu-network-compare")
        write_report(path, args, facts, topo, plans, tables, misses,
                     failures, seconds)
    return common.log_outcome([two, four, tables["runs"]], misses, failures,
                              key_lines(plans, numbers), path, seconds)


if __name__ == "__main__":
    sys.exit(main())
