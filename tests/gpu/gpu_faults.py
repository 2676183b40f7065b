"""Fault scenarios on real GPU ranks (tests/gpu/run.sh, step faults).

Two ranks, both HetCCL GPU ranks forced into 2 domains (HETCCL_DOMAINS=
split:2), over shm (HETCCL_TRANSPORT=shm) or tcp (HETCCL_HOSTID=A,B: two
pretend hosts, HETCCL_TRANSPORT=auto), run a long loop of checked
all-reduces with GPU buffers. About 3 s into the loop rank 1 is killed
(SIGKILL) or stopped (SIGSTOP); the scenario measures how long rank 0, the
survivor, takes to exit after that, with which exit status and which error.

Drivers:
  perf      build-gpu/tools/hetccl-perf, each rank started by hand (the
            variables torchrun sets, HETCCL_COMM_ID on 127.0.0.1), 1000
            checked all-reduces per case over every data type and 3 ops
            (hetccl-perf --check 1000): it exits 2 with the error on a
            failed call
  torch     tests/gpu/torch_fault_allreduce.py, two processes started by
            hand (RANK, WORLD_SIZE, MASTER_ADDR, ...), HetCCL's
            libnccl.so.2 preloaded, process group timeout 20 s
  torchrun  the same script under torchrun --standalone --nproc_per_node 2:
            torchrun's agent also watches the ranks and stops the others
            when one fails, so this is what a training job sees
Faults: exit (rank 1 calls os._exit(0) by itself, without destroying its
communicator: a departure the survivor's next all-reduce must fail on, not
sum without it), kill (SIGKILL rank 1; HETCCL_TIMEOUT left at its default, 0: no
timeout, so only HetCCL's noticing the dead peer ends the wait), stop
(SIGSTOP rank 1 with HETCCL_TIMEOUT=5: the survivor must give up after the
timeout; rank 1 is killed afterwards), abort (torch: rank 1 stops calling
collectives, rank 0 waits for an all-reduce that cannot finish and a
thread aborts its process group, ncclCommAbort underneath, 2 s later).
torch-shm-graph-kill loops over replays of a CUDA graph that captured the
all-reduce (--graph): a replay calls no NCCL function, so the survivor
learns of the lost peer only through the process group's watchdog, which
reads ncclCommGetAsyncError.

Every scenario has a hard limit: whatever still runs then is killed
(SIGKILL, process group) and the scenario FAILs. Prints one line per
scenario ("FAULT name: PASS ...") and writes the markdown record --out.
A survivor's result that is wrong (WRONG: every torch scenario checks
every all-reduce) fails the scenario, whatever else happened.
Exit status 0 when every scenario that ran passed.
"""
import argparse
import datetime
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

# How long after the fault the survivor may take to exit, and why.
KILL_BOUND = 30.0   # seconds: HetCCL notices a dead peer in about a second
                    # (pidfd watchdog on one host, closed connection over
                    # tcp); 30 s leaves room for the process's teardown and,
                    # under torch, is above the 20 s process-group timeout
                    # plus 10 s, so a hang cannot pass
STOP_TIMEOUT = 5    # HETCCL_TIMEOUT of the stop scenarios
STOP_BOUND = STOP_TIMEOUT + 15.0  # the timeout, then teardown and exit
ABORT_BOUND = 30.0  # rank 0 must exit this long after it called the abort
PG_TIMEOUT = 20     # the torch process group's timeout (seconds)
TORCH_DUMP_WAIT_MS = 1000  # TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC (base_env)
READY_LIMIT = 60.0  # seconds for the ranks to start and report READY
HARD_EXTRA = 10.0   # the hard limit: the bound plus this, then SIGKILL
DIAG_SECONDS = 25.0  # cuda-gdb's look at a survivor that did not exit


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A process in a session of its own, its output read line by line and
    timestamped (monotonic clock), its exit time taken by a waiting
    thread."""

    def __init__(self, name, argv, env, log_path):
        self.name = name
        self.argv = argv
        self.lines = []  # (monotonic time, text)
        self.exit_time = None
        self.returncode = None
        self.log_path = log_path
        self.log = open(log_path, "w", encoding="utf-8", errors="replace")
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.popen.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()

    def _read(self):
        for raw in self.popen.stdout:
            now = time.monotonic()
            text = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append((now, text))
            self.log.write(f"[{now - self.started:8.3f}] {text}\n")
            self.log.flush()

    def mark(self, text):
        """A line of the driver's own in the log (what it did, when)."""
        now = time.monotonic()
        self.log.write(f"[{now - self.started:8.3f}] [driver] {text}\n")
        self.log.flush()

    def _wait(self):
        code = self.popen.wait()
        self.exit_time = time.monotonic()
        self.returncode = code

    def find(self, pattern, after=0.0):
        """The first (time, match) of a line matching pattern, or None."""
        regex = re.compile(pattern)
        for when, text in list(self.lines):
            if when < after:
                continue
            found = regex.search(text)
            if found:
                return when, found
        return None

    def wait_for(self, pattern, deadline):
        """Waits for a matching line until deadline (monotonic) or exit."""
        while time.monotonic() < deadline:
            hit = self.find(pattern)
            if hit:
                return hit
            if self.exit_time is not None:
                time.sleep(0.2)  # the reader may lag the exit a little
                return self.find(pattern)
            time.sleep(0.02)
        return None

    def wait_exit(self, deadline):
        while self.exit_time is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.exit_time is None:
            return False
        self.reader.join(timeout=3)  # its last lines
        return True

    def kill_group(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.reader.join(timeout=5)
        self.waiter.join(timeout=5)
        self.log.close()

    def tail(self, count=6):
        return [text for _, text in self.lines[-count:]]


class PidWatch:
    """The exit time of a process that is not our child (a torchrun
    worker): polls /proc/PID/stat, gone or a zombie means exited."""

    def __init__(self, pid):
        self.pid = pid
        self.exit_time = None
        self.stop = False
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        path = f"/proc/{self.pid}/stat"
        while not self.stop:
            try:
                with open(path, encoding="utf-8") as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                state = "gone"
            if state in ("gone", "Z", "X"):
                self.exit_time = time.monotonic()
                return
            time.sleep(0.01)


def cuda_gdb():
    """cuda-gdb (the GPU machines have no gdb), else gdb."""
    return shutil.which("cuda-gdb") or next(
        (p for p in ("/usr/local/cuda/bin/cuda-gdb",) if os.path.exists(p)),
        None) or shutil.which("gdb")


def backtrace(pid, log_path):
    """Where a process that did not exit waits: cuda-gdb attaches (batch),
    prints every thread's stack to log_path and detaches. Returns a short
    summary: the main thread's innermost frames."""
    gdb = cuda_gdb()
    if not gdb:
        return "no cuda-gdb or gdb to look at it"
    try:
        done = subprocess.run(
            [gdb, "-q", "-batch", "-p", str(pid), "-ex", "info threads",
             "-ex", "thread apply all bt 20"], capture_output=True,
            text=True, timeout=DIAG_SECONDS, stdin=subprocess.DEVNULL)
        text = done.stdout + done.stderr
    except subprocess.TimeoutExpired as error:
        text = (error.stdout or b"").decode("utf-8", "replace") \
            if isinstance(error.stdout, bytes) else (error.stdout or "")
        text += "\n(cuda-gdb timed out)"
    except OSError as error:
        return f"cuda-gdb failed: {error}"
    Path(log_path).write_text(text)
    # The main thread: "Thread N (Thread 0x... (LWP PID))" then "#k ... in F (".
    frames, inside = [], False
    for line in text.splitlines():
        if line.startswith("Thread "):
            inside = f"(LWP {pid})" in line
            continue
        if inside:
            found = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?([^\s(]+)", line)
            if found and found.group(1) != "??":
                frames.append(found.group(1))
    if not frames:
        return f"no stack of the main thread (see {Path(log_path).name})"
    return "main thread in " + " < ".join(frames[:10])


def describe_status(code):
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


ERROR_PATTERNS = (
    r"ncclRemoteError|remote process exited|RemoteError",
    r"^hetccl-perf: ", r"FAULT_SEEN", r"HETCCL WARN", r"NCCL WARN",
    r"Watchdog caught|timed out|Timeout", r"[Ee]rror")


def first_error(proc, after, only=None):
    """The survivor's most telling error line after the fault (only: a
    pattern the line must match too, for torchrun's mixed output)."""
    for pattern in ERROR_PATTERNS:
        combined = pattern if only is None else f"(?={only}).*(?:{pattern})"
        hit = proc.find(combined, after)
        if hit:
            return " ".join(hit[1].string.split())[:300]
    return ""


# The first sign that the survivor noticed: HetCCL's warning, an NCCL error
# named by torch, the script's FAULT_SEEN, hetccl-perf's error line.
NOTICED = (r"HETCCL WARN|ncclRemoteError|remote process exited|FAULT_SEEN|"
           r"^hetccl-perf: ")


def noticed_after(proc, after, only=None):
    pattern = NOTICED if only is None else f"(?={only}).*(?:{NOTICED})"
    hit = proc.find(pattern, after)
    return None if hit is None else hit[0] - after


def names_remote_error(proc, after, only=None):
    pattern = r"ncclRemoteError|remote process exited"
    if only is not None:
        pattern = f"(?={only}).*(?:{pattern})"
    return proc.find(pattern, after) is not None


def shm_entries():
    try:
        return sorted(name for name in os.listdir("/dev/shm")
                      if "hetccl" in name.lower())
    except OSError:
        return []


class Scenario:
    def __init__(self, name, driver, transport, fault, graph=False):
        self.name = name
        self.driver = driver
        self.transport = transport
        self.fault = fault
        self.graph = graph  # the loop replays a captured CUDA graph
        self.bound = {"kill": KILL_BOUND, "exit": KILL_BOUND,
                      "stop": STOP_BOUND, "abort": ABORT_BOUND}[fault]
        self.hetccl_timeout = STOP_TIMEOUT if fault == "stop" else None
        # The time left that a scenario needs to be started: what it
        # takes when all goes well (start, 3 s of loop, exit) plus its
        # bound, so that a survivor that hangs is still seen to hang.
        typical = {"perf": 12, "torch": 25, "torchrun": 30}[driver]
        self.budget = typical + self.bound + DIAG_SECONDS


SCENARIOS = [
    Scenario("torchrun-shm-kill", "torchrun", "shm", "kill"),
    Scenario("torchrun-tcp-kill", "torchrun", "tcp", "kill"),
    Scenario("perf-shm-kill", "perf", "shm", "kill"),
    Scenario("perf-tcp-kill", "perf", "tcp", "kill"),
    Scenario("perf-shm-stop", "perf", "shm", "stop"),
    Scenario("perf-tcp-stop", "perf", "tcp", "stop"),
    Scenario("torch-shm-kill", "torch", "shm", "kill"),
    Scenario("torch-tcp-kill", "torch", "tcp", "kill"),
    Scenario("torch-shm-abort", "torch", "shm", "abort"),
    Scenario("torch-shm-graph-kill", "torch", "shm", "kill", graph=True),
    # Rank 1 leaves by os._exit(0): no signal, no destroy. The survivor
    # checks every result; it must fail, never sum without rank 1.
    Scenario("torch-shm-exit", "torch", "shm", "exit"),
    Scenario("torch-tcp-exit", "torch", "tcp", "exit"),
    Scenario("torch-shm-graph-exit", "torch", "shm", "exit", graph=True),
    Scenario("torch-tcp-graph-kill", "torch", "tcp", "kill", graph=True),
]


def base_env(args, scenario):
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("HETCCL_PERF_") or name in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                "MASTER_PORT", "HETCCL_COMM_ID", "NCCL_COMM_ID"):
            del env[name]
    env.update({
        "HETCCL_NCCL_LIBRARY": args.nccl_library,
        "HETCCL_DOMAINS": "split:2",
        "HETCCL_DEBUG": "WARN",
        "NCCL_NVLS_ENABLE": "0",
        "PYTHONUNBUFFERED": "1",
    })
    env.pop("HETCCL_TIMEOUT", None)
    if scenario.hetccl_timeout is not None:
        env["HETCCL_TIMEOUT"] = str(scenario.hetccl_timeout)
    if scenario.transport == "shm":
        env["HETCCL_TRANSPORT"] = "shm"
        env.pop("HETCCL_HOSTID", None)
    else:
        env["HETCCL_TRANSPORT"] = "auto"
        env["HETCCL_HOSTID"] = "A,B"
    if scenario.driver != "perf":
        env["LD_PRELOAD"] = args.hetccl_lib
        # PyTorch's watchdog sleeps four times this long between seeing a
        # communicator's error and ending the process, to let flight
        # recorders dump (15 s by default: a minute, with NVIDIA's NCCL as
        # with HetCCL). The bounds here measure HetCCL's part; a value set
        # by the caller is kept.
        env.setdefault("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC",
                       str(TORCH_DUMP_WAIT_MS))
    return env


def shown_env(env, scenario):
    keys = ["HETCCL_DOMAINS", "HETCCL_TRANSPORT", "HETCCL_HOSTID",
            "HETCCL_TIMEOUT", "TORCH_NCCL_DUMP_ON_TIMEOUT",
            "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC"]
    if scenario.driver != "perf":
        keys = ["LD_PRELOAD"] + keys
    return " ".join(f"{k}={env[k]}" for k in keys if k in env)


def perf_argv(args, seconds):
    return [args.perf, "-D", "split:2", "-x", "allreduce", "-d", "all",
            "-o", "sum,max,min", "-b", "1M", "-e", "1M", "-c", "1000",
            "-w", "0", "-n", "1", "--placement", "both",
            "--timeout", str(int(seconds))]


def torch_args(scenario):
    mode = "abort" if scenario.fault == "abort" else "kill"
    return [str(Path(__file__).with_name("torch_fault_allreduce.py")),
            "--mode", mode, "--seconds", "90", "--pg-timeout", str(PG_TIMEOUT),
            "--check-every", "1"
            ] + (["--graph"] if scenario.graph else []) + (
                ["--leave-after", "3"] if scenario.fault == "exit" else [])


def run_scenario(args, scenario, log_dir):
    """Runs one scenario; returns a dict for the record."""
    env = base_env(args, scenario)
    record = {"name": scenario.name, "driver": scenario.driver,
              "transport": scenario.transport, "fault": scenario.fault,
              "hetccl_timeout": scenario.hetccl_timeout or "default (0)",
              "bound": scenario.bound, "env": shown_env(env, scenario),
              "exit_after": None, "status": "", "error": "",
              "remote_error": False, "seen_after": None, "notes": [],
              "noticed_after": None,
              "result": "FAIL", "command": ""}
    procs = []
    watch = None
    shm_before = set(shm_entries())
    try:
        start = time.monotonic()
        if scenario.driver in ("perf", "torch"):
            port = free_port()
            for rank in (0, 1):
                rank_env = dict(env, RANK=str(rank), WORLD_SIZE="2",
                                LOCAL_RANK=str(rank))
                if scenario.driver == "perf":
                    rank_env["HETCCL_COMM_ID"] = f"127.0.0.1:{port}"
                    argv = perf_argv(args, READY_LIMIT + scenario.bound + 60)
                else:
                    rank_env.update(MASTER_ADDR="127.0.0.1",
                                    MASTER_PORT=str(port))
                    argv = [args.python] + torch_args(scenario)
                procs.append(Proc(f"rank{rank}", argv, rank_env,
                                  log_dir / f"{scenario.name}-rank{rank}.log"))
            shown = " ".join(argv[1:] if scenario.driver == "perf" else argv[1:])
            tool = "build-gpu/tools/hetccl-perf" if scenario.driver == "perf" \
                else "python3"
            where = ("HETCCL_COMM_ID=127.0.0.1:<port>" if scenario.driver ==
                     "perf" else "MASTER_ADDR=127.0.0.1 MASTER_PORT=<port>")
            record["command"] = (f"{record['env']} RANK=r WORLD_SIZE=2 "
                                 f"LOCAL_RANK=r {where} {tool} {shown}"
                                 ).replace(str(Path(__file__).parent),
                                           "tests/gpu")
        else:
            argv = [args.python, "-m", "torch.distributed.run", "--standalone",
                    "--nproc_per_node", "2"] + torch_args(scenario)
            procs.append(Proc("torchrun", argv, env,
                              log_dir / f"{scenario.name}.log"))
            record["command"] = (f"{record['env']} python3 " +
                                 " ".join(argv[1:])).replace(
                                     str(Path(__file__).parent), "tests/gpu")
        runner = procs[0]  # rank 0's process, or torchrun

        # Ready: the loop runs.
        deadline = start + READY_LIMIT
        if scenario.driver == "perf":
            ready = runner.wait_for(r"^# Collective test", deadline)
            victim_pid = procs[1].pid
        else:
            r0 = runner.wait_for(r"READY rank=0 pid=(\d+)", deadline)
            r1 = (procs[1] if scenario.driver == "torch" else runner).wait_for(
                r"READY rank=1 pid=(\d+)", deadline)
            ready = r0 and r1
            victim_pid = int(r1[1].group(1)) if r1 else None
            survivor_pid = int(r0[1].group(1)) if r0 else None
        if not ready:
            record["notes"].append(
                f"the ranks did not start within {READY_LIMIT:.0f} s: " +
                " | ".join(sum((p.tail(4) for p in procs), [])))
            return record
        record["ready_s"] = ready[0] - start if scenario.driver == "perf" \
            else max(r0[0], r1[0]) - start
        if scenario.driver == "torchrun":
            watch = PidWatch(survivor_pid)

        # The fault, about 3 s into the loop.
        if scenario.fault == "exit":
            leaver = procs[1] if scenario.driver == "torch" else runner
            hit = leaver.wait_for(r"LEAVING rank=1", time.monotonic() + 60)
            if not hit:
                record["notes"].append("rank 1 never left: " +
                                       " | ".join(leaver.tail(4)))
                return record
            fault_time = hit[0]
        elif scenario.fault != "abort":
            time.sleep(3.0)
            if any(p.exit_time is not None for p in procs) or (
                    watch and watch.exit_time is not None):
                record["notes"].append(
                    "a rank had exited before the fault: " +
                    " | ".join(sum((p.tail(3) for p in procs), [])))
                return record
            sig = signal.SIGKILL if scenario.fault == "kill" else signal.SIGSTOP
            fault_time = time.monotonic()
            os.kill(victim_pid, sig)
            runner.mark(f"{sig.name} sent to rank 1 (pid {victim_pid})")
        else:
            hit = runner.wait_for(r"ABORT_CALLED rank=0",
                                  time.monotonic() + 60)
            if not hit:
                record["notes"].append("rank 0 never called the abort: " +
                                       " | ".join(runner.tail(4)))
                return record
            fault_time = hit[0]

        # The survivor's exit.
        hard = fault_time + scenario.bound + HARD_EXTRA
        if scenario.driver == "torchrun":
            while watch.exit_time is None and time.monotonic() < hard:
                time.sleep(0.01)
                if time.monotonic() > fault_time + scenario.bound and \
                        "diag" not in record:
                    record["diag"] = backtrace(
                        survivor_pid, log_dir / f"{scenario.name}-survivor-bt.log")
                    record["notes"].append(
                        f"{scenario.bound:.0f} s after the fault rank 0 was "
                        f"still running; cuda-gdb: {record['diag']}")
                    hard = time.monotonic() + 3
            exit_time = watch.exit_time
            runner.wait_exit(hard)
            record["status"] = (f"torchrun {describe_status(runner.returncode)}"
                                f" after {runner.exit_time - fault_time:.2f} s"
                                if runner.exit_time else "torchrun still running")
            got = runner.find(r"exitcode\s*:\s*(-?\d+)\s*\(pid:\s*%d\)" %
                              survivor_pid, fault_time)
            if got:
                record["status"] += f"; rank 0 exitcode {got[1].group(1)}"
            closing = runner.find(
                r"Sending process %d closing signal (\w+)" % survivor_pid,
                fault_time)
            if closing:
                record["notes"].append(
                    f"torchrun sent rank 0 {closing[1].group(1)} "
                    f"{closing[0] - fault_time:.2f} s after the fault")
        else:
            survivor = procs[0]
            if not survivor.wait_exit(fault_time + scenario.bound):
                where = backtrace(survivor.pid, log_dir /
                                  f"{scenario.name}-survivor-bt.log")
                record["notes"].append(
                    f"{scenario.bound:.0f} s after the fault the survivor was "
                    f"still running; cuda-gdb: {where}")
                hard = time.monotonic() + 3
            survivor.wait_exit(hard)
            exit_time = survivor.exit_time
            record["status"] = describe_status(survivor.returncode)
        if exit_time is not None:
            record["exit_after"] = exit_time - fault_time
        # Under torchrun: rank 0's lines only (torch's "[rank0]" prefix,
        # HetCCL's "host:pid:tid" one, the script's own).
        only = None if scenario.driver != "torchrun" else \
            r"\[rank0\]|:%d:|rank=0" % survivor_pid
        record["error"] = first_error(runner, fault_time, only)
        record["remote_error"] = names_remote_error(runner, fault_time, only)
        record["noticed_after"] = noticed_after(runner, fault_time, only)
        seen = runner.find(r"FAULT_SEEN rank=0", fault_time)
        if seen:
            record["seen_after"] = seen[0] - fault_time
        if scenario.fault == "abort":
            returned = runner.find(r"ABORT_RETURNED rank=0 after=([0-9.]+) (.*)")
            unblocked = runner.find(r"UNBLOCKED rank=0 after=(\S+) (.*)")
            if returned:
                record["notes"].append(
                    f"the abort returned after {returned[1].group(1)} s "
                    f"({returned[1].group(2)[:120]})")
            if unblocked:
                record["notes"].append(
                    f"the waiting main thread unblocked after "
                    f"{unblocked[1].group(1)} s: {unblocked[1].group(2)[:160]}")
                record["seen_after"] = unblocked[0] - fault_time
            else:
                record["notes"].append("the waiting main thread never "
                                       "unblocked")
        if scenario.driver != "perf" and scenario.fault == "kill" and \
                record["exit_after"] is not None:
            before = record["exit_after"] < PG_TIMEOUT
            record["notes"].append(
                f"rank 0 exited {'before' if before else 'after'} the "
                f"{PG_TIMEOUT} s process-group timeout")
        wrong = runner.find(r"WRONG rank=|Out of bounds values : [1-9]")
        if wrong:
            record["notes"].append("a wrong result reported as a success: " +
                                   wrong[1].string[:120])
        ok = record["exit_after"] is not None and \
            record["exit_after"] <= scenario.bound and not wrong
        if scenario.driver == "perf":
            # An error exit (2), not success nor the tool's own timeout.
            ok = ok and procs[0].returncode == 2
        if scenario.fault == "abort":
            ok = ok and unblocked is not None
        record["result"] = "PASS" if ok else "FAIL"
        if record["exit_after"] is None:
            record["notes"].append(
                f"the survivor had not exited {time.monotonic() - fault_time:.0f}"
                " s after the fault: killed (hang)")
        return record
    finally:
        if watch:
            watch.stop = True
        # A stopped rank is killed now, with everything left over.
        for proc in procs:
            if scenario.driver == "torchrun":
                for pid in (locals().get("victim_pid"),
                            locals().get("survivor_pid")):
                    if pid:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
            proc.kill_group()
        left = sorted(set(shm_entries()) - shm_before)
        if left:
            record["notes"].append(f"left in /dev/shm: {', '.join(left[:5])}"
                                   f"{' ...' if len(left) > 5 else ''}")
        record["survivor_tail"] = procs[0].tail(8) if procs else []


def fmt(value):
    return "-" if value is None else f"{value:.2f}"


def first_line(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out or "unknown"


def write_record(args, records, skipped, path):
    repo = str(Path(__file__).resolve().parents[2])
    commit = first_line(["git", "-C", repo, "rev-parse", "--short", "HEAD"])
    changed = first_line(["git", "-C", repo, "status", "--short"])
    dirty = "" if changed == "unknown" else \
        f" plus {len(changed.splitlines())} changed or new files"
    source = args.source or f"HetCCL commit {commit}{dirty}"
    torch_version = first_line([args.python, "-c",
                                "import torch; print(torch.__version__)"])
    lines = [
        "# GPU ranks under faults: a peer killed, stopped, or aborted",
        "",
        f"Run on {datetime.datetime.now().isoformat(timespec='seconds')} by "
        f"`tests/gpu/run.sh` (step faults: `tests/gpu/gpu_faults.py`); "
        f"source: {source}.",
        "",
        "- GPUs: " + first_line(["nvidia-smi", "-L"]).replace("\n", "; "),
        "- driver: " + first_line(["nvidia-smi", "--query-gpu=driver_version",
                                   "--format=csv,noheader"]).splitlines()[0],
        f"- PyTorch {torch_version}; NVIDIA NCCL (HETCCL_NCCL_LIBRARY) "
        f"{args.nccl_library}",
        f"- command: `{args.command}`" if args.command else "",
        "",
        "Two HetCCL GPU ranks in 2 domains (`HETCCL_DOMAINS=split:2`), rank r "
        "on GPU r % count, over shm (`HETCCL_TRANSPORT=shm`, the stream-driven "
        "path among a host's GPUs) or tcp (`HETCCL_HOSTID=A,B`, two pretend "
        "hosts: the GPU engine over tcp links), run a loop of checked "
        "all-reduces on GPU buffers. About 3 s into the loop rank 1 is "
        "killed (SIGKILL; `HETCCL_TIMEOUT` at its default, 0, so only "
        "HetCCL's noticing the dead peer ends the wait) or stopped (SIGSTOP "
        f"with `HETCCL_TIMEOUT={STOP_TIMEOUT}`; killed once the survivor is "
        "gone). *noticed after*: seconds from the signal to the survivor's "
        "first sign of it (a HETCCL WARN line, an NCCL error named by torch, "
        "FAULT_SEEN, hetccl-perf's error line); *exit after*: seconds from "
        "the signal to the exit of rank 0, the survivor (under torchrun: of "
        "the rank 0 worker process). A survivor still running at its bound "
        "is looked at with cuda-gdb (every thread's stack, in the log "
        "folder) before it is killed. "
        "perf: `hetccl-perf` ranks started by hand (`--check 1000`: 1000 "
        "checked launches per case, every data type, sum/max/min, 1 MB); "
        "torch: `tests/gpu/torch_fault_allreduce.py` started by hand, "
        f"process group timeout {PG_TIMEOUT} s, HetCCL preloaded as "
        "libnccl.so.2; torchrun: the same under `torchrun --standalone "
        "--nproc_per_node 2`, whose agent also stops the other workers when "
        "one fails. abort: rank 1 stops calling collectives, rank 0 waits "
        "for an all-reduce that cannot finish and a thread aborts the "
        "process group (ncclCommAbort) 2 s later; *exit after* counts from "
        "the abort call.",
        "",
        f"Bounds: kill {KILL_BOUND:.0f} s (HetCCL notices a dead peer within "
        "about a second, by the watchdog's pidfd on one host or the closed "
        "tcp connection; the rest is room for the teardown, and for torch "
        f"it is above the {PG_TIMEOUT} s process-group timeout plus 10 s); "
        f"stop {STOP_BOUND:.0f} s (HETCCL_TIMEOUT={STOP_TIMEOUT} plus 15 s); "
        f"abort {ABORT_BOUND:.0f} s. A scenario PASSes when the survivor "
        "exits within its bound (hetccl-perf: with its error status 2; "
        "abort: and the waiting thread was freed). Whatever still ran "
        f"{HARD_EXTRA:.0f} s after the bound was killed.",
        "",
        "| scenario | driver | transport | fault | HETCCL_TIMEOUT "
        "| noticed after (s) | exit after (s) | survivor's status | error seen "
        "| ncclRemoteError named | FAULT_SEEN / UNBLOCKED after (s) "
        "| bound (s) | result |",
        "|---|---|---|---|---|---:|---:|---|---|---|---:|---:|---|",
    ]
    for r in records:
        error = r["error"].replace("|", "\\|") or "-"
        lines.append(
            f"| {r['name']} | {r['driver']} | {r['transport']} | {r['fault']} "
            f"| {r['hetccl_timeout']} | {fmt(r['noticed_after'])} | "
            f"{fmt(r['exit_after'])} | "
            f"{r['status'] or '-'} | {error} | "
            f"{'yes' if r['remote_error'] else 'no'} | "
            f"{fmt(r['seen_after'])} | {r['bound']:.0f} | {r['result']} |")
    for name in skipped:
        lines.append(f"| {name} | | | | | | | | not run: no time left | | "
                     f"| | not run |")
    lines += ["", "## Notes", ""]
    for r in records:
        notes = "; ".join(r["notes"]) or "-"
        lines.append(f"- {r['name']}: {notes}")
    lines += ["", "## Commands", "",
              "From the repository root, with tests/gpu/run.sh's environment "
              "(NCCL_NVLS_ENABLE=0, the wheels' CUDA runtime on "
              "LD_LIBRARY_PATH, HETCCL_NCCL_LIBRARY=<NVIDIA libnccl.so.2>):",
              "", "```"]
    lines += [f"{r['name']}: {r['command']}" for r in records]
    lines += ["```", "", "## The survivor's last lines", ""]
    for r in records:
        lines += [f"{r['name']}:", "```"] + \
            [t[:300] for t in r.get("survivor_tail", [])] + ["```", ""]
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perf", required=True)
    parser.add_argument("--hetccl-lib", required=True,
                        help="HetCCL's libnccl.so.2, preloaded for torch")
    parser.add_argument("--nccl-library", required=True,
                        help="NVIDIA's libnccl.so.2 (HETCCL_NCCL_LIBRARY)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", required=True, help="the markdown record")
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--deadline", type=float, default=300,
                        help="seconds; scenarios that would not fit are "
                        "not started")
    parser.add_argument("--only", default="",
                        help="comma-separated scenario names (default all)")
    parser.add_argument("--command", default="",
                        help="the command line to name in the record")
    parser.add_argument("--source", default="",
                        help="what tree was built (default: git's view)")
    args = parser.parse_args()
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    by_name = {s.name: s for s in SCENARIOS}
    unknown = [n for n in args.only.split(",") if n and n not in by_name]
    if unknown:
        parser.error(f"unknown scenarios {unknown}; known: {list(by_name)}")
    # --only also gives the order.
    wanted = [by_name[n] for n in args.only.split(",") if n] if args.only \
        else SCENARIOS
    begin = time.monotonic()
    records, skipped = [], []
    for scenario in wanted:
        left = args.deadline - (time.monotonic() - begin)
        if left < scenario.budget:
            skipped.append(scenario.name)
            print(f"FAULT {scenario.name}: not run ({left:.0f} s left, "
                  f"{scenario.budget:.0f} s needed)", flush=True)
            continue
        record = run_scenario(args, scenario, log_dir)
        records.append(record)
        print(f"FAULT {scenario.name}: {record['result']} noticed after "
              f"{fmt(record['noticed_after'])} s, exit after "
              f"{fmt(record['exit_after'])} s, {record['status']}; "
              f"seen after {fmt(record['seen_after'])} s; "
              f"{record['error'][:160]}; {'; '.join(record['notes'])[:300]}",
              flush=True)
        write_record(args, records, skipped, args.out)  # after each one
    write_record(args, records, skipped, args.out)
    passed = sum(r["result"] == "PASS" for r in records)
    print(f"KEY {passed} of {len(records)} scenarios passed"
          f"{f', {len(skipped)} not run' if skipped else ''}: " +
          ", ".join(f"{r['name']} {fmt(r['exit_after'])} s {r['result']}"
                    for r in records), flush=True)
    return 0 if records and passed == len(records) else 1


if __name__ == "__main__":
    sys.exit(main())
