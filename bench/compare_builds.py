#!/usr/bin/env python3
"""Compares two builds of HetCCL on the same hetccl-perf run, alternating.

A refactoring must not cost speed; two runs made minutes apart differ by
more than the change itself, so this runs the same hetccl-perf command from
a "before" build and an "after" build in turns, the one that goes first
changing every round (before, after, after, before, ...: whichever runs
first in a round could gain or lose from it), --rounds times each, and
reports per collective and size the median busbw of each build, the range
over its rounds (the run-to-run noise) and the ratio of the medians
(in-place and out-of-place rows apart; --placement out measures only the
latter). The report (markdown: tables, exact commands, raw JSON) goes to
--out, else bench/results/compare-builds-<date>.md.

Example, the host all-reduce of 4 CPU ranks in one domain and in two:
    bench/compare_builds.py --before /work/base/build --after build \\
        --label "4 CPU ranks" -- -np 4 -x allreduce -b 1K -e 64M -f 4
Everything after -- is hetccl-perf's arguments (--json is added); with
--env NAME=VALUE the variable is set for both builds' runs. Both builds are
measured by the same hetccl-perf (the after build's), which loads each
build's libnccl.so.2 through --nccl-library, so that only the library
differs; --own-tools runs each build's own hetccl-perf instead (needed
where an older hetccl-perf cannot load the library that way). With
--after-env NAME=VALUE the variable is set for the after runs only: the
same build given as --before and --after then measures what a setting
costs.

Not a test: run it on a quiet machine.
"""

import argparse
import datetime
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import (chart_hint, cpu_model, format_bytes,
                          hetccl_commit, load_average, perf_binary,
                          read_json_lines, report_path, tool_environment,
                          write_report_file)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="build directory")
    parser.add_argument("--after", required=True, help="build directory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="", help="what is measured")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE for every run (repeatable)")
    parser.add_argument("--after-env", action="append", default=[],
                        help="NAME=VALUE for the after runs (repeatable)")
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds allowed for each run")
    parser.add_argument("--out", help="report path")
    parser.add_argument("--own-tools", action="store_true",
                        help="run each build's own hetccl-perf")
    parser.add_argument("perf_args", nargs=argparse.REMAINDER,
                        help="-- then hetccl-perf's arguments")
    args = parser.parse_args()
    if args.perf_args and args.perf_args[0] == "--":
        args.perf_args = args.perf_args[1:]
    if not args.perf_args:
        parser.error("give hetccl-perf's arguments after --")
    return args


def run_once(build, args, env, json_path):
    if args.own_tools:
        command = [str(perf_binary(build))]
    else:
        library = Path(build).resolve() / "src" / "libnccl.so.2"
        command = [str(perf_binary(args.after)), "--nccl-library",
                   str(library)]
    command += args.perf_args + ["--json", str(json_path)]
    result = subprocess.run(command, env=env, capture_output=True, text=True,
                            timeout=args.timeout, check=False)
    if result.returncode != 0:
        sys.exit(f"FAILED RUN ({result.returncode}): {shlex.join(command)}\n"
                 f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return command


def main():
    args = parse_args()
    changes = dict(item.split("=", 1) for item in args.env)
    after_changes = dict(item.split("=", 1) for item in args.after_env)
    envs = {"before": tool_environment(changes),
            "after": tool_environment({**changes, **after_changes})}
    builds = {"before": args.before, "after": args.after}
    busbw = {}  # (build, coll, bytes) -> [GB/s per round]
    commands = {}
    raw = []
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            order = list(builds.items())
            if round_index % 2:
                order.reverse()
            for name, build in order:
                json_path = Path(scratch) / f"{name}-{round_index}.jsonl"
                commands[name] = run_once(build, args, envs[name], json_path)
                for record in read_json_lines(json_path):
                    coll = record["coll"] + (
                        " (in place)" if record.get("inplace") else "")
                    key = (name, coll, record["bytes"])
                    busbw.setdefault(key, []).append(record["busbw_GBps"])
                    raw.append({"build": name, "round": round_index, **record})
                print(f"round {round_index + 1}/{args.rounds}: {name} done",
                      flush=True)
    rows = ["| collective | size | before busbw (range) | after busbw (range) "
            "| after / before |", "|---|---:|---:|---:|---:|"]
    for _, coll, size in sorted(k for k in busbw if k[0] == "before"):
        before = busbw[("before", coll, size)]
        after = busbw.get(("after", coll, size), [])
        if not after:
            continue
        b, a = statistics.median(before), statistics.median(after)
        rows.append(
            f"| {coll} | {format_bytes(size)} | {b:.2f} ({min(before):.2f}-"
            f"{max(before):.2f}) | {a:.2f} ({min(after):.2f}-{max(after):.2f})"
            f" | {a / b if b else float('nan'):.3f} |")
    def env_shown(name):
        shown = {**changes, **(after_changes if name == "after" else {})}
        return "".join(f"{k}={v} " for k, v in shown.items())

    parts = [
        f"# Before/after: {args.label or 'hetccl-perf'}",
        "",
        f"Run on {datetime.datetime.now().isoformat(timespec='seconds')} by "
        f"bench/compare_builds.py, {args.rounds} alternating rounds per build"
        f"; commit {hetccl_commit()}; {cpu_model()}; load {load_average()}.",
        "Median busbw in GB/s, the range over the rounds in brackets.",
        "",
        "Commands:",
        "",
        *[f"    {name}: {env_shown(name)}{shlex.join(command)}"
          for name, command in commands.items()],
        "",
        *rows,
        "",
        "<details><summary>raw JSON</summary>",
        "",
        "```",
        *[str(record) for record in raw],
        "```",
        "</details>",
        "",
    ]
    path = report_path(args.out, "compare-builds")
    write_report_file(path, parts)
    chart_hint(path)
    print("\n".join(rows))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
