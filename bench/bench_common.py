"""What the benchmark scripts of bench/ share: machine facts, running
commands (hetccl-perf above all) with a timeout, formatting and writing the
markdown reports.

Imported by the scripts beside it (they are run as `python3 bench/x.py`,
which puts bench/ on the import path) and by tests/gpu/run.sh with
PYTHONPATH=bench. Needs only the standard library.
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class RunFailure(Exception):
    """A run that produced no usable result."""


def log(message):
    print(message, flush=True)


def die(message):
    print(f"{Path(sys.argv[0]).name}: ERROR: {message}", file=sys.stderr,
          flush=True)
    sys.exit(2)


# ----------------------------------------------------------------------------
# The machine.

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


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_times():
    """The machine's CPU time counters (the "cpu" line of /proc/stat), or
    None where there is none."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    return [int(x) for x in fields[1:]]


def steal_percent(before, after):
    """The share of the CPUs' time between two cpu_times() that the
    hypervisor gave to others (steal, the 8th counter): on a shared
    virtual machine the noise behind a spread of rounds. None where it
    cannot tell."""
    steal = 7
    if not before or not after or len(before) <= steal or \
            len(after) <= steal:
        return None
    total = sum(after[:8]) - sum(before[:8])
    if total <= 0:
        return None
    return 100.0 * (after[steal] - before[steal]) / total


def hetccl_commit():
    """HEAD, and how many tracked files the working tree changes (a record
    must not pass a run of edited code off as the commit's)."""
    head = first_lines(["git", "-C", str(REPO), "rev-parse", "--short",
                        "HEAD"])[0]
    changed = [line for line in first_lines(
        ["git", "-C", str(REPO), "status", "--porcelain",
         "--untracked-files=no"], count=100000) if line.strip()]
    if changed and changed != ["unknown"]:
        return f"{head} plus {len(changed)} changed file(s) in the tree"
    return head


# ----------------------------------------------------------------------------
# GPUs: NVIDIA's NCCL, the CUDA runtime, the build.

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


def gpu_machine_facts(nccl_library):
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
             ("HetCCL commit", hetccl_commit()),
             ("load average at start", load_average())]
    return facts


def topology():
    return first_lines(["nvidia-smi", "topo", "-m"], 12)


# ----------------------------------------------------------------------------
# Running hetccl-perf.

RANK_LINE = re.compile(r"#\s+Rank\s+(\d+)\s+Pid\s+\d+\s+on\s+\S+\s+runtime\s+"
                       r"(\S+)\s+device\s+(.*?)\s+domain\s+(\d+)\s+of\s+(\d+)")


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


def parse_variant(text):
    """NAME:VAR=VALUE,... (argparse type of --variant): (NAME, {VAR: VALUE})."""
    name, _, settings = text.partition(":")
    changes = {}
    for item in filter(None, settings.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"not VAR=VALUE: {item}")
        changes[key] = value
    if not name:
        raise argparse.ArgumentTypeError(f"a variant needs a name: {text}")
    return name, changes


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


def link_bandwidth(build_dir, transport, sizes, json_path, log_path, timeout,
                   two_way=True, ranks=2, total="4G", env_changes=None,
                   window=None):
    """Runs bench/link-bandwidth (the yardstick of cross-host busbw: with
    `two_way`, the rate each way of a link loaded both ways; `window`
    transfers in flight, the tool's default when None) and returns
    ({bytes: GB/s}, the command as a shell line); empty on failure, which
    the log at `log_path` explains."""
    exe = Path(build_dir) / "bench" / "link-bandwidth"
    command = [str(exe), "--transport", transport, "--sizes",
               ",".join(str(s) for s in sizes), "--bytes", total,
               "--json", str(json_path)]
    if two_way:
        command.append("--two-way")
    if ranks != 2:
        command += ["--ranks", str(ranks)]
    if window is not None:
        command += ["--window", str(window)]
    changes = env_changes or {}
    shown = shown_command(command, changes)
    if not exe.is_file():
        Path(log_path).write_text(f"{exe} is not built\n")
        return {}, shown
    log(f"$ {shown}")
    status = run_logged(command, tool_environment(changes), log_path, timeout)
    records = read_json_lines(Path(json_path)) if status == 0 else []
    return {r["bytes"]: r["GBps"] for r in records}, shown


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


def run_required(run, start, deadline, timeout, ndomains, nranks, failures):
    """Runs `run` (a PerfRun) unless `deadline` is less than 10 s away, and
    requires every one of its `nranks` ranks on CUDA in `ndomains` domains;
    appends to `failures` why it was not run or failed."""
    left = remaining(start, deadline)
    if left < 10:
        failures.append(f"{run.label}: not run, --deadline reached")
        return
    run.run(min(timeout + 30, left))
    try:
        run.require("cuda", ndomains, nranks)
    except RunFailure as failure:
        failures.append(str(failure))
        log(f"!! {failure}")


# ----------------------------------------------------------------------------
# Formatting and reports.

def read_json_lines(path):
    records = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def json_line(record):
    """A record as one line of the reports' raw JSON."""
    return json.dumps(record, separators=(",", ":"))


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


def summary_section(failures, misses, misses_heading, all_good):
    """The report's summary lines: the failed runs with the end of their
    output, the missed targets under `misses_heading`, or `all_good`."""
    parts = []
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
        parts += [misses_heading, ""]
        parts += [f"- {m}" for m in misses] + [""]
    if not failures and not misses:
        parts += [all_good, ""]
    return parts


def write_report_file(path, parts):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


def chart_hint(report):
    """Says how to draw a report's charts. The scripts write the report
    only: charts are drawn on demand by bench/charts.py and not committed."""
    path = Path(report).resolve()
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    log(f"charts: python3 bench/charts.py {shown} draws this report's charts "
        "into bench/charts/ (--out DIR for another directory)")


def log_outcome(texts, misses, failures, key_line, path, seconds):
    """Prints the tables, missed targets, failed runs and the "KEY ..." line
    (tests/gpu/run.sh's summary); returns the exit status: 1 when a run
    failed."""
    log("")
    for text in texts:
        log(text)
    for miss in misses:
        log(f"MISSED TARGET: {miss}")
    for failure in failures:
        log(f"FAILED RUN: {failure.splitlines()[0]}")
    log(key_line)
    log(f"report written to {path} ({seconds:.0f} s)")
    return 1 if failures else 0
