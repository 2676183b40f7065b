#!/usr/bin/env python3
"""A HetCCL link over an NCCL net plugin against the plugin alone, and
against plain tcp, in one run on this machine (issue #35's target: the
link at 0.9x the plugin alone or better, at 1 MB and 64 MB).

For each plugin (aws-ofi-nccl over libfabric's tcp provider on loopback,
built by scripts/build-aws-ofi-nccl.sh; the stand-in plugin of
tests/net_plugin), one direction between two processes:

- the plugin alone: `net-plugin-bandwidth` (an isend/irecv loop on one
  comm, one registered buffer, messages of the whole transfer where the
  plugin's maxP2pBytes allows);
- a HetCCL link over it: `link-bandwidth --transport net`, once per
  variant (--variant NAME:VAR=VALUE,...: settings side by side, e.g.
  before and after a change that a variable switches);

and HetCCL's own tcp link (`link-bandwidth --transport tcp`). Both tools
keep 4 transfers in flight. Rounds alternate the runs; the report gives
each figure's median and every round's, and the ratio link / plugin alone
of the medians.

Writes a markdown record (commands, machine, tables, raw JSON) to --out or
bench/results/net-plugin-compare-<date>.md; prints "MISSED TARGET" for a
ratio below --target and a "KEY" line. The exit status is 1 if a run
failed.

    python3 bench/net_plugin_compare.py [--build build] [--rounds 3]
        [--sizes 1M,64M] [--bytes 1G] [--plugins aws-ofi-nccl,standin]
        [--variant NAME:VAR=V,...]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common as common  # noqa: E402  (the shared helpers, beside us)

TARGET = 0.9


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(common.REPO / "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1M,64M")
    parser.add_argument("--bytes", default="1G",
                        help="bytes moved per size and run (default 1G)")
    parser.add_argument("--plugins", default="aws-ofi-nccl,standin")
    parser.add_argument("--variant", type=common.parse_variant,
                        action="append",
                        help="NAME:VAR=VALUE,... for the HetCCL link (the "
                        "default variant, 'default', sets nothing)")
    parser.add_argument("--target", type=float, default=TARGET)
    parser.add_argument("--out")
    args = parser.parse_args()
    args.variant = args.variant or [("default", {})]
    args.size_list = [common.parse_size(s) for s in args.sizes.split(",")]
    return args


def plugin_setups(args, build):
    """(name, {variables}) for each plugin asked for and available, and the
    notes on those that are not."""
    setups, notes = [], []
    for name in args.plugins.split(","):
        if name == "standin":
            path = build / "tests" / "net_plugin" / "libnccl-net-hetccl-test.so"
            if path.is_file():
                setups.append((name, {"HETCCL_NET_PLUGIN": str(path)}))
            else:
                notes.append(f"standin: {path} is not built")
        elif name == "aws-ofi-nccl":
            out = subprocess.run(
                [str(common.REPO / "scripts" / "build-aws-ofi-nccl.sh")],
                capture_output=True, text=True, check=False)
            cudart = build / "tests" / "net_plugin" / "cudart"
            if out.returncode != 0:
                notes.append("aws-ofi-nccl: not built here: "
                             + out.stderr.strip().splitlines()[-1])
            elif not (cudart / "libcudart.so").is_file():
                notes.append(f"aws-ofi-nccl: no stand-in CUDA runtime at "
                             f"{cudart} (build hetccl_standin_cudart)")
            else:
                old = os.environ.get("LD_LIBRARY_PATH")
                setups.append((name, {
                    "HETCCL_NET_PLUGIN": out.stdout.strip(),
                    "FI_PROVIDER": "tcp",
                    "LD_LIBRARY_PATH": str(cudart) + (f":{old}" if old else ""),
                }))
        else:
            common.die(f"--plugins: unknown plugin '{name}' (have "
                       "aws-ofi-nccl, standin)")
    return setups, notes


class Run:
    """One tool run: its command shown with its variables, its figures."""

    def __init__(self, label, command, changes, log_dir, stem):
        self.label = label
        self.command = command
        self.changes = changes
        self.json_path = log_dir / f"{stem}.jsonl"
        self.log_path = log_dir / f"{stem}.log"
        self.command.extend(["--json", str(self.json_path)])
        self.records = []
        self.error = None

    @property
    def shown(self):
        return common.shown_command(self.command, self.changes)

    def run(self):
        common.log(f"$ {self.shown}")
        env = dict(os.environ)
        env.update(self.changes)
        status = common.run_logged(self.command, env, self.log_path, 900)
        self.records = common.read_json_lines(self.json_path)
        if status != 0 or not self.records:
            tail = "\n".join(self.log_path.read_text(
                errors="replace").splitlines()[-8:])
            self.error = (f"{self.label}: exit status {status} "
                          f"(log {self.log_path})\n{tail}")
        return {r["bytes"]: r["GBps"] for r in self.records}


def main():
    args = parse_args()
    build = Path(args.build).resolve()
    for tool in ("net-plugin-bandwidth", "link-bandwidth"):
        if not (build / "bench" / tool).is_file():
            common.die(f"{build}/bench/{tool} is not built")
    setups, notes = plugin_setups(args, build)
    if not setups:
        common.die("no plugin to measure: " + "; ".join(notes))
    log_dir = Path(tempfile.mkdtemp(prefix="net-plugin-compare."))
    sizes = ",".join(str(s) for s in args.size_list)
    start = time.monotonic()
    load_at_start = common.load_average()
    figures = {}  # (plugin, what) -> {size: [GB/s per round]}
    shown = {}  # (plugin, what) -> the command
    failures, raw = [], []

    def measure(key, run):
        values = run.run()
        shown.setdefault(key, run.shown)
        raw.extend(run.records)
        if run.error:
            failures.append(run.error)
        for size, value in values.items():
            figures.setdefault(key, {}).setdefault(size, []).append(value)

    bench = build / "bench"
    for round_index in range(args.rounds):
        common.log(f"round {round_index + 1} of {args.rounds}")
        for name, changes in setups:
            stem = f"{name}-r{round_index}"
            measure((name, "alone"), Run(
                f"{name} alone round {round_index}",
                [str(bench / "net-plugin-bandwidth"), "--sizes", sizes,
                 "--bytes", args.bytes], dict(changes), log_dir,
                f"{stem}-alone"))
            for variant, extra in args.variant:
                measure((name, f"link {variant}"), Run(
                    f"{name} link {variant} round {round_index}",
                    [str(bench / "link-bandwidth"), "--transport", "net",
                     "--sizes", sizes, "--bytes", args.bytes],
                    {**changes, **extra}, log_dir, f"{stem}-link-{variant}"))
        measure(("tcp", "link"), Run(
            f"tcp link round {round_index}",
            [str(bench / "link-bandwidth"), "--transport", "tcp", "--sizes",
             sizes, "--bytes", args.bytes], {}, log_dir,
            f"tcp-r{round_index}"))

    def median(key, size):
        values = figures.get(key, {}).get(size)
        return statistics.median(values) if values else None

    def cell(key, size):
        values = figures.get(key, {}).get(size)
        if not values:
            return "-"
        rounds = ", ".join(f"{v:.2f}" for v in values)
        return f"{statistics.median(values):.2f} ({rounds})"

    misses = []
    key_parts = []
    parts = [
        "# A HetCCL link over an NCCL net plugin vs the plugin alone",
        "",
        f"- Command: `python3 bench/net_plugin_compare.py --rounds "
        f"{args.rounds} --sizes {args.sizes} --bytes {args.bytes} --plugins "
        f"{args.plugins}"
        + "".join(f" --variant {v}:" + ",".join(f"{k}={x}" for k, x in
                                              c.items())
                  for v, c in args.variant
                  if c or len(args.variant) > 1)
        + "`",
        f"- Machine: {common.cpu_model()}, {os.cpu_count()} cores; load "
        f"{load_at_start} at start, {common.load_average()} at the end; "
        f"HetCCL {common.hetccl_commit()}",
        f"- One direction between two processes, 4 transfers in flight; "
        f"{args.rounds} alternating rounds, each cell the median GB/s "
        f"(10^9 bytes/s) with every round's figure in brackets; a ratio is "
        f"that of the medians, and in brackets the median of each round's "
        f"ratio (the two runs of a round are back to back, so it follows "
        f"the machine's load less).",
        "",
    ]
    parts += [f"- Not measured: {note}" for note in notes]
    if notes:
        parts.append("")
    parts += ["## Commands (round 0; later rounds the same)", ""]
    for key, command in shown.items():
        parts.append(f"- {key[0]} {key[1]}: `{command}`")
    parts += ["", "## Bandwidth", ""]
    variants = [v for v, _ in args.variant]
    header = ["size", "plugin", "plugin alone"]
    header += [f"HetCCL link ({v})" for v in variants]
    header += [f"link ({v}) / alone" for v in variants] + ["HetCCL tcp link"]
    parts.append("| " + " | ".join(header) + " |")
    parts.append("|" + " ---: |" * len(header))
    for size in args.size_list:
        for name, _ in setups:
            alone = median((name, "alone"), size)
            row = [common.format_bytes(size), name, cell((name, "alone"),
                                                         size)]
            row += [cell((name, f"link {v}"), size) for v in variants]
            for v in variants:
                link = median((name, f"link {v}"), size)
                if link is None or not alone:
                    row.append("-")
                    continue
                ratio = link / alone
                paired = statistics.median(
                    a / b for a, b in zip(
                        figures[(name, f"link {v}")][size],
                        figures[(name, "alone")][size]))
                row.append(f"{ratio:.2f} (per round: {paired:.2f})")
                key_parts.append(f"{name}/{v}/{common.format_bytes(size)}="
                                 f"{ratio:.2f}")
                if ratio < args.target:
                    misses.append(f"{name} {common.format_bytes(size)}: the "
                                  f"link ({v}) at {ratio:.2f}x the plugin "
                                  f"alone (target {args.target}x)")
            row.append(cell(("tcp", "link"), size))
            parts.append("| " + " | ".join(row) + " |")
    parts.append("")
    parts += common.summary_section(failures, misses, "Missed targets:",
                                    f"Every ratio at {args.target}x or above.")
    parts += ["## Raw JSON", "", "```"]
    parts += [common.json_line(r) for r in raw]
    parts += ["```", ""]
    path = common.report_path(args.out, "net-plugin-compare")
    common.write_report_file(path, parts)
    return common.log_outcome(
        ["\n".join(parts[:parts.index("## Raw JSON")])], misses, failures,
        "KEY link/alone " + " ".join(key_parts), path,
        time.monotonic() - start)


if __name__ == "__main__":
    raise SystemExit(main())
