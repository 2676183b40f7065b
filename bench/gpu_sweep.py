#!/usr/bin/env python3
"""nccl-tests-style sweep on 2 GPUs: NVIDIA's NCCL beside HetCCL's pass-through.

For each of allreduce, allgather, reducescatter, broadcast and alltoall, from
8 B to 4 GB (x2), runs `hetccl-perf -np 2 --check 0 --placement out` twice:
with `--nccl-library <NVIDIA NCCL>` (native: the tool calls NVIDIA's NCCL
directly) and with the HetCCL it links (`HETCCL_NCCL_LIBRARY=<NVIDIA NCCL>`,
so HetCCL passes the one-domain communicator through to the same NCCL). The
two alternate per collective, repetition and size range, so that both see
the same machine conditions. Small sizes (< 1 MB) get many iterations, for
stable latencies; each size's result is the best of the repetitions.

Targets (printed, never the exit status): busbw >= 0.99x native from 1 MB
up; latency <= native + 1 us below 64 KB. The exit status is non-zero only
when a run failed (a rank error, a timeout, missing sizes, ranks not on the
GPUs).

Writes a markdown report (machine, commands, tables, raw JSON) to
bench/results/gpu-sweep-<date>.md or --out. Needs only the standard library;
run it with the Python that has PyTorch's NVIDIA wheels (it finds NCCL and
the CUDA runtime there), e.g. /opt/torch/.venv/bin/python3.

Time on 2 H200s: about 5 s per run (start-up, CUDA and NCCL init, 8 GB of
buffers filled) and 1 s of measurement; 5 collectives x 2 libraries x 2
size ranges x 2 repetitions = 40 runs, about 2.5 to 3 minutes.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast",
               "alltoall")
LATENCY_BELOW = 64 << 10    # latency target below this size
BANDWIDTH_FROM = 1 << 20    # busbw target from this size up
SMALL_BELOW = 1 << 20       # sizes below use the many-iteration settings
LATENCY_SLACK_US = 1.0
BANDWIDTH_RATIO = 0.99
NATIVE, HETCCL = "native", "hetccl"
TITLES = {NATIVE: "NVIDIA NCCL", HETCCL: "HetCCL"}


class RunFailure(Exception):
    """A run that produced no usable result."""


def log(message):
    print(message, flush=True)


def die(message):
    print(f"{Path(sys.argv[0]).name}: ERROR: {message}", file=sys.stderr,
          flush=True)
    sys.exit(2)


# ----------------------------------------------------------------------------
# The environment: NVIDIA's NCCL, the CUDA runtime, the build.

def nvidia_package_dirs():
    """The nvidia/ namespace package dirs of this Python (PyTorch wheels)."""
    try:
        import nvidia  # noqa: F401  (the wheels' namespace package)
        return [Path(p) for p in nvidia.__path__]
    except ImportError:
        return []


def find_nvidia_nccl(explicit):
    """NVIDIA's libnccl.so.2: --nccl-library, HETCCL_NCCL_LIBRARY, or the
    nvidia-nccl wheel of this Python."""
    for candidate, source in ((explicit, "--nccl-library"),
                              (os.environ.get("HETCCL_NCCL_LIBRARY"),
                               "HETCCL_NCCL_LIBRARY")):
        if candidate:
            if not Path(candidate).is_file():
                die(f"{source}={candidate} is not a file")
            return str(Path(candidate).resolve())
    for base in nvidia_package_dirs():
        for path in sorted(base.glob("**/libnccl.so.2")):
            return str(path.resolve())
    die("NVIDIA's libnccl.so.2 not found: run with the Python that has "
        "PyTorch's nvidia-nccl wheel (e.g. /opt/torch/.venv/bin/python3) or "
        "pass --nccl-library PATH")
    return None


def cuda_runtime_dirs():
    """Directories holding libcudart.so*, for hetccl-perf's dlopen: the
    wheels of this Python first, then a system CUDA."""
    found = []
    candidates = [str(p) for p in nvidia_package_dirs()]
    candidates += ["/usr/local/cuda/lib64",
                   "/usr/local/cuda/targets/x86_64-linux/lib"]
    for base in candidates:
        for path in sorted(glob.glob(f"{base}/**/libcudart.so*",
                                     recursive=True)):
            directory = str(Path(path).parent.resolve())
            if directory not in found:
                found.append(directory)
    return found


def tool_environment(changes):
    """This process's environment with `changes` applied (None removes a
    variable), NVLink SHARP off and the CUDA runtime on LD_LIBRARY_PATH.
    HETCCL_DOMAINS and HETCCL_FORCE_CPU are dropped unless `changes` sets
    them: a stray one would change what is measured."""
    env = dict(os.environ)
    env.pop("HETCCL_DOMAINS", None)
    env.pop("HETCCL_FORCE_CPU", None)
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    runtime_dirs = cuda_runtime_dirs()
    if runtime_dirs:
        old = env.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = ":".join(runtime_dirs + ([old] if old else []))
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def environment_note():
    """What tool_environment() adds to every command, for the reports."""
    dirs = cuda_runtime_dirs()
    note = ("Every command ran with NCCL_NVLS_ENABLE="
            f"{os.environ.get('NCCL_NVLS_ENABLE', '0')}, without "
            "HETCCL_DOMAINS / HETCCL_FORCE_CPU unless shown")
    if dirs:
        note += f", and LD_LIBRARY_PATH starting with {':'.join(dirs)}"
    return note + "."


def perf_binary(build_dir):
    exe = Path(build_dir) / "tools" / "hetccl-perf"
    if not exe.is_file():
        die(f"{exe} is not built (cmake --build {build_dir} --target "
            "hetccl-perf)")
    return exe


def first_lines(command, count=1):
    try:
        out = subprocess.run(command, capture_output=True, text=True,
                             timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ["unknown"]
    return out.splitlines()[:count] if out else ["unknown"]


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_facts(nccl_library):
    """(name, value) pairs for the report; GPU facts from nvidia-smi."""
    facts = [("GPUs (nvidia-smi -L)",
              "; ".join(first_lines(["nvidia-smi", "-L"], 16))),
             ("driver", first_lines(
                 ["nvidia-smi", "--query-gpu=driver_version",
                  "--format=csv,noheader"])[0]),
             ("CPU", f"{cpu_model()}, {len(os.sched_getaffinity(0))} cores "
              "available"),
             ("kernel", platform.release()),
             ("NVIDIA NCCL library", nccl_library),
             ("HetCCL commit", first_lines(
                 ["git", "-C", str(REPO), "rev-parse", "--short",
                  "HEAD"])[0]),
             ("load average at start", " ".join(
                 f"{x:.2f}" for x in os.getloadavg()))]
    return facts


def topology():
    return first_lines(["nvidia-smi", "topo", "-m"], 12)


# ----------------------------------------------------------------------------
# Running hetccl-perf.

RANK_LINE = re.compile(r"#\s+Rank\s+(\d+)\s+Pid\s+\d+\s+on\s+\S+\s+runtime\s+"
                       r"(\S+)\s+device\s+(.*?)\s+domain\s+(\d+)\s+of\s+(\d+)")


def read_json_lines(path):
    records = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def run_logged(command, env, log_path, timeout):
    """Runs `command` with its output in `log_path`; returns its exit status,
    124 after `timeout` seconds. It runs in a session of its own, so that a
    timeout stops its whole process tree (torchrun's workers, hetccl-perf's
    ranks), not only the process started here."""
    with open(log_path, "w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            out.write(f"\n[killed after {timeout:.0f} s]\n")
            return 124


def shown_command(command, env_changes):
    """The command as a shell line, with the variables this script set."""
    prefix = [f"{name}={shlex.quote(value)}"
              for name, value in sorted(env_changes.items())
              if value is not None]
    return " ".join(prefix + [shlex.join(command)])


class PerfRun:
    """One hetccl-perf run: its command, log, JSON records and the ranks'
    runtime and domain lines from the header."""

    def __init__(self, label, command, env_changes, json_path, log_path):
        self.label = label
        self.command = command
        self.env_changes = env_changes
        self.json_path = json_path
        self.log_path = log_path
        self.records = []
        self.ranks = []  # (rank, runtime, device, domain, ndomains)
        self.returncode = None
        self.seconds = 0.0
        self.error = None

    @property
    def shown(self):
        return shown_command(self.command, self.env_changes)

    def run(self, timeout):
        log(f"$ {self.shown}")
        start = time.monotonic()
        self.returncode = run_logged(self.command,
                                     tool_environment(self.env_changes),
                                     self.log_path, timeout)
        self.seconds = time.monotonic() - start
        self.records = read_json_lines(self.json_path)
        text = Path(self.log_path).read_text(errors="replace")
        self.ranks = [(int(m[1]), m[2], m[3], int(m[4]), int(m[5]))
                      for m in RANK_LINE.finditer(text)]
        if self.returncode != 0:
            tail = "\n".join(text.splitlines()[-8:])
            self.error = (f"{self.label}: exit status {self.returncode} "
                          f"after {self.seconds:.0f} s (log {self.log_path})"
                          f"\n{tail}")
        log(f"  {self.label}: exit {self.returncode}, {len(self.records)} "
            f"results, {self.seconds:.1f} s")
        return self

    def require(self, runtime, ndomains, nranks):
        """Raises RunFailure unless the run succeeded with every rank on
        `runtime` in `ndomains` domains."""
        if self.error:
            raise RunFailure(self.error)
        if not self.records:
            raise RunFailure(f"{self.label}: no results in {self.json_path} "
                             f"(log {self.log_path})")
        if len(self.ranks) != nranks:
            raise RunFailure(f"{self.label}: the header names "
                             f"{len(self.ranks)} ranks, not {nranks} "
                             f"(log {self.log_path})")
        for rank, kind, device, _, domains in self.ranks:
            if kind != runtime or domains != ndomains:
                raise RunFailure(
                    f"{self.label}: rank {rank} ran on {kind} ({device}) in "
                    f"{domains} domain(s), not on {runtime} in {ndomains}: "
                    f"the measurement would not be the one asked for "
                    f"(log {self.log_path})")


def remaining(start, deadline):
    """Seconds left before `deadline` (seconds after `start`; None: no
    deadline)."""
    if deadline is None:
        return float("inf")
    return deadline - (time.monotonic() - start)


def perf_command(exe, nranks, collective, min_bytes, max_bytes, warmup,
                 iters, json_path, timeout, extra=()):
    return [str(exe), "-np", str(nranks), "-x", collective, "-d", "float32",
            "-o", "sum", "--check", "0", "--placement", "out",
            "-b", str(min_bytes), "-e", str(max_bytes), "-f", "2",
            "-w", str(warmup), "-n", str(iters), "--json", str(json_path),
            "--timeout", str(timeout)] + list(extra)


# ----------------------------------------------------------------------------
# Formatting.

def parse_size(text):
    match = re.fullmatch(r"(\d+)([KMGkmg]?)[Bb]?", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text}")
    shift = {"": 0, "k": 10, "m": 20, "g": 30}[match[2].lower()]
    return int(match[1]) << shift


def format_bytes(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def format_time(us):
    if us is None:
        return "-"
    return f"{us:.0f}" if us >= 1000 else f"{us:.2f}"


def format_busbw(value):
    return "-" if value is None else f"{value:.2f}"


def report_path(out, stem):
    if out:
        return Path(out)
    results = REPO / "bench" / "results"
    dated = f"{stem}-{datetime.date.today().isoformat()}"
    path = results / f"{dated}.md"
    serial = 2
    while path.exists():  # never overwrite an earlier run of the same day
        path = results / f"{dated}-{serial}.md"
        serial += 1
    return path


def iteration_pair(text):
    try:
        warmup, iters = (int(x) for x in text.split(","))
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"expected WARMUP,ITERS, got {text}") from error
    return warmup, iters


# ----------------------------------------------------------------------------
# The sweep.

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build-gpu"),
                        help="CMake build with tools/hetccl-perf "
                        "(default: build-gpu)")
    parser.add_argument("--nccl-library",
                        help="NVIDIA's libnccl.so.2 (default: "
                        "HETCCL_NCCL_LIBRARY, else the nvidia-nccl wheel)")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("-b", "--min-bytes", type=parse_size, default=8)
    parser.add_argument("-e", "--max-bytes", type=parse_size,
                        default=4 << 30)
    parser.add_argument("--small-iters", type=iteration_pair,
                        default=(50, 1000), metavar="WARMUP,ITERS",
                        help="below 1 MB (default 50,1000)")
    parser.add_argument("--large-iters", type=iteration_pair,
                        default=(5, 30), metavar="WARMUP,ITERS",
                        help="from 1 MB up (default 5,30)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs of each library per size range; the "
                        "best is kept (default 2)")
    parser.add_argument("--nranks", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60,
                        help="seconds allowed for one hetccl-perf run")
    parser.add_argument("--deadline", type=float,
                        help="seconds after which no further run starts "
                        "(the report is still written)")
    parser.add_argument("--log-dir",
                        help="keep each run's output here (default: a "
                        "temporary directory)")
    parser.add_argument("--out", help="report path (default: "
                        "bench/results/gpu-sweep-<date>.md)")
    return parser.parse_args()


def size_ranges(args):
    """(name, first, last, (warmup, iters)) of the two ranges."""
    ranges = []
    if args.min_bytes < SMALL_BELOW:
        ranges.append(("small", args.min_bytes,
                       min(args.max_bytes, SMALL_BELOW // 2),
                       args.small_iters))
    if args.max_bytes >= SMALL_BELOW:
        ranges.append(("large", max(args.min_bytes, SMALL_BELOW),
                       args.max_bytes, args.large_iters))
    return ranges


def plan_runs(args, exe, nccl_library, workdir, log_dir):
    """Every run, in the order they execute: per collective, repetition and
    size range, the two libraries in alternating order."""
    runs = []
    collectives = [c for c in args.collectives.split(",") if c]
    for ci, collective in enumerate(collectives):
        for rep in range(args.repeats):
            for name, first, last, (warmup, iters) in size_ranges(args):
                order = ((NATIVE, HETCCL) if (ci + rep) % 2 == 0
                         else (HETCCL, NATIVE))
                for impl in order:
                    stem = f"{collective}-{name}-{impl}-r{rep}"
                    json_path = workdir / f"{stem}.jsonl"
                    extra, env = [], {}
                    if impl == NATIVE:
                        extra = ["--nccl-library", nccl_library]
                    else:
                        env = {"HETCCL_NCCL_LIBRARY": nccl_library}
                    command = perf_command(exe, args.nranks, collective,
                                           first, last, warmup, iters,
                                           json_path, args.timeout, extra)
                    run = PerfRun(stem, command, env, json_path,
                                  log_dir / f"sweep-{stem}.log")
                    run.collective, run.impl, run.rep = collective, impl, rep
                    runs.append(run)
    return runs


def best_by_size(runs, collective, impl):
    """bytes -> the record with the shortest time over the repetitions."""
    best = {}
    for run in runs:
        if run.collective != collective or run.impl != impl:
            continue
        for rec in run.records:
            old = best.get(rec["bytes"])
            if old is None or rec["time_us"] < old["time_us"]:
                best[rec["bytes"]] = rec
    return best


def judge(size, native, hetccl):
    """(target text, PASS/FAIL/'-', miss description or None)."""
    if size < LATENCY_BELOW:
        delta = hetccl["time_us"] - native["time_us"]
        ok = delta <= LATENCY_SLACK_US
        miss = None if ok else (f"{format_time(hetccl['time_us'])} us vs "
                                f"{format_time(native['time_us'])} us "
                                f"(+{delta:.2f} us > {LATENCY_SLACK_US} us)")
        return f"time <= native + {LATENCY_SLACK_US:g} us", \
            "PASS" if ok else "FAIL", miss
    if size >= BANDWIDTH_FROM:
        ratio = (hetccl["busbw_GBps"] / native["busbw_GBps"]
                 if native["busbw_GBps"] > 0 else 0.0)
        ok = ratio >= BANDWIDTH_RATIO
        miss = None if ok else (f"busbw {hetccl['busbw_GBps']:.2f} vs "
                                f"{native['busbw_GBps']:.2f} GB/s "
                                f"({ratio:.3f}x < {BANDWIDTH_RATIO}x)")
        return f"busbw >= {BANDWIDTH_RATIO}x", "PASS" if ok else "FAIL", miss
    return "-", "-", None


def collective_table(runs, collective):
    """Markdown table of one collective, the misses, and the size counts."""
    native = best_by_size(runs, collective, NATIVE)
    hetccl = best_by_size(runs, collective, HETCCL)
    lines = [f"### {collective}", "",
             "| size | native us | HetCCL us | native busbw GB/s | "
             "HetCCL busbw GB/s | HetCCL / native busbw | target | result |",
             "|---:|---:|---:|---:|---:|---:|:---|:---|"]
    misses, missing, judged = [], [], 0
    for size in sorted(set(native) | set(hetccl)):
        n, h = native.get(size), hetccl.get(size)
        if n is None or h is None:
            missing.append(size)
            lines.append(f"| {format_bytes(size)} | "
                         f"{format_time(n and n['time_us'])} | "
                         f"{format_time(h and h['time_us'])} | "
                         f"{format_busbw(n and n['busbw_GBps'])} | "
                         f"{format_busbw(h and h['busbw_GBps'])} | - | - | "
                         "MISSING |")
            continue
        ratio = (f"{h['busbw_GBps'] / n['busbw_GBps']:.3f}"
                 if n["busbw_GBps"] > 0 else "-")
        target, result, miss = judge(size, n, h)
        judged += result != "-"
        if miss:
            misses.append(f"{collective} {format_bytes(size)}: {miss}")
        lines.append(f"| {format_bytes(size)} | {format_time(n['time_us'])} | "
                     f"{format_time(h['time_us'])} | "
                     f"{format_busbw(n['busbw_GBps'])} | "
                     f"{format_busbw(h['busbw_GBps'])} | {ratio} | {target} | "
                     f"{result} |")
    return "\n".join(lines) + "\n", misses, missing, judged


def key_numbers(runs, judged, missed):
    """One "KEY ..." line for tests/gpu/run.sh's summary: targets met, and
    all-reduce latency at the smallest size and busbw at the largest."""
    text = f"KEY targets met {judged - missed}/{judged}"
    native = best_by_size(runs, "allreduce", NATIVE)
    hetccl = best_by_size(runs, "allreduce", HETCCL)
    sizes = sorted(set(native) & set(hetccl))
    if sizes:
        low, high = sizes[0], sizes[-1]
        text += (f"; allreduce {format_bytes(low)}B: "
                 f"{format_time(native[low]['time_us'])} vs "
                 f"{format_time(hetccl[low]['time_us'])} us, "
                 f"{format_bytes(high)}B: "
                 f"{format_busbw(native[high]['busbw_GBps'])} vs "
                 f"{format_busbw(hetccl[high]['busbw_GBps'])} GB/s "
                 "(native vs HetCCL)")
    return text


def write_report(path, args, facts, topo, runs, tables, misses, failures,
                 seconds):
    now = datetime.datetime.now().isoformat(timespec="seconds")
    (sw, si), (lw, li) = args.small_iters, args.large_iters
    parts = [
        "# GPU sweep: NVIDIA NCCL vs HetCCL pass-through", "",
        f"Run on {now} by `bench/gpu_sweep.py` in {seconds:.0f} s: "
        f"{args.nranks} GPUs, `hetccl-perf -np {args.nranks}`, float32 "
        "(sum), out of place, no check; native = `--nccl-library` "
        "(NVIDIA's NCCL called directly), HetCCL = the linked HetCCL with "
        "`HETCCL_NCCL_LIBRARY` (one domain: passed through to the same "
        f"NCCL). Below 1 MB: {sw} warm-up and {si} timed iterations; from "
        f"1 MB: {lw} and {li}. Each library ran {args.repeats} time(s) per "
        "size range, alternating with the other; each size shows the best "
        "time (mean of the ranks' per-iteration times) of those runs. busbw "
        "as nccl-tests (GB = 1e9 bytes).", "",
        f"Targets: busbw >= {BANDWIDTH_RATIO}x native from "
        f"{format_bytes(BANDWIDTH_FROM)}; time <= native + "
        f"{LATENCY_SLACK_US:g} us below {format_bytes(LATENCY_BELOW)}.", "",
        "## Summary", ""]
    if failures:
        parts += ["Failed runs (each with the end of its output):", ""]
        for failure in failures:
            first, *rest = failure.splitlines()
            parts += [f"- {first}"]
            if rest:
                parts += ["", "  ```"] + [f"  {line}" for line in rest]
                parts += ["  ```"]
        parts += [""]
    if misses:
        parts += [f"Missed targets ({len(misses)}):", ""]
        parts += [f"- {m}" for m in misses] + [""]
    if not failures and not misses:
        parts += ["Every run succeeded and every target was met.", ""]
    parts += ["## Machine", ""] + [f"- {k}: {v}" for k, v in facts]
    parts += ["", "```"] + topo + ["```", "", "## Results", ""] + tables
    parts += ["## Commands", "", environment_note(), "", "```"]
    parts += [r.shown for r in runs] + ["```", ""]
    parts += ["## Raw JSON", "", "```"]
    for run in runs:
        parts.append(f"# {run.label}")
        parts += [json.dumps(rec, separators=(",", ":")) for rec in run.records]
    parts += ["```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


def main():
    args = parse_args()
    start = time.monotonic()
    exe = perf_binary(args.build_dir)
    nccl_library = find_nvidia_nccl(args.nccl_library)
    if not cuda_runtime_dirs():
        log("warning: no libcudart.so* found in the nvidia wheels or "
            "/usr/local/cuda; hetccl-perf relies on the loader's path")
    facts = machine_facts(nccl_library)
    topo = topology()
    with tempfile.TemporaryDirectory(prefix="hetccl-gpu-sweep-") as tmp:
        log_dir = Path(args.log_dir) if args.log_dir else Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        runs = plan_runs(args, exe, nccl_library, Path(tmp), log_dir)
        log(f"{len(runs)} runs of hetccl-perf; about 5-6 s each on H200s")
        failures = []
        for run in runs:
            left = remaining(start, args.deadline)
            if left < 10:
                failures.append(f"{run.label}: not run, --deadline reached")
                continue
            run.run(min(args.timeout + 30, left))
            try:
                run.require("cuda", 1, args.nranks)
            except RunFailure as failure:
                failures.append(str(failure))
                log(f"!! {failure}")
    tables, misses, missing_total, judged_total = [], [], 0, 0
    for collective in [c for c in args.collectives.split(",") if c]:
        table, coll_misses, missing, judged = collective_table(runs, collective)
        tables.append(table)
        misses += coll_misses
        missing_total += len(missing)
        judged_total += judged
        if missing:
            failures.append(f"{collective}: no result of both libraries for "
                            f"{', '.join(format_bytes(s) for s in missing)}")
        log(f"{collective}: {judged - len(coll_misses)}/{judged} targets met"
            + (f", {len(missing)} sizes missing" if missing else ""))
    seconds = time.monotonic() - start
    path = report_path(args.out, "gpu-sweep")
    write_report(path, args, facts, topo, runs, tables, misses, failures,
                 seconds)
    log("")
    log("\n".join(tables))
    for miss in misses:
        log(f"MISSED TARGET: {miss}")
    for failure in failures:
        log(f"FAILED RUN: {failure.splitlines()[0]}")
    log(key_numbers(runs, judged_total, len(misses)))
    log(f"report written to {path} ({seconds:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
