#!/usr/bin/env python3
"""The ucx transport against UCX's own benchmark and against the tcp link,
all in one run on this machine:

1. Link bandwidth, one direction between two processes, 4 MiB to 256 MiB
   transfers: ucx_perftest -t tag_bw (UCX_TLS=tcp), HetCCL's ucx link
   (build/bench/link-bandwidth --transport ucx, UCX_TLS=tcp) and HetCCL's
   tcp link (--transport tcp). Targets: ucx >= 0.9 x ucx_perftest, and
   ucx >= tcp.
2. Cross-domain all-reduce, 2+2 CPU ranks in two network namespaces joined
   by a veth (tests/netns/run_two_hosts.sh; needs root): the tcp link
   against the ucx link (UCX_TLS=tcp). Target: ucx >= tcp.

Rounds alternate the implementations and the best of each is kept (the
machine is shared and noisy). ucx_perftest's MB/s are MiB/s (UCX's
UCS_MBYTE); everything is reported in GB/s (10^9 bytes).

  python3 bench/ucx_link_compare.py [--build build] [--rounds 3]
      [--sizes 4M,16M,64M,256M] [--out FILE]
"""

import argparse
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import bench_common as bc

PERFTEST_FINAL = re.compile(r"^Final:\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)")
PERF_ROW = re.compile(r"^\s+(\d+)\s+\d+\s+float32\s+sum\s+\S+\s+\S+\s+\S+\s+(\S+)")


def perftest_gbps(size, iters, port, log_dir):
    """ucx_perftest tag_bw between a server and a client process."""
    env = dict(os.environ, UCX_TLS="tcp")
    common = ["-t", "tag_bw", "-s", str(size), "-n", str(iters), "-p",
              str(port)]
    server = subprocess.Popen(["ucx_perftest"] + common, env=env,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        out = subprocess.run(["ucx_perftest", "127.0.0.1"] + common, env=env,
                             capture_output=True, text=True, timeout=300)
    finally:
        server.wait(timeout=60)
    (log_dir / f"perftest-{size}.log").write_text(out.stdout + out.stderr)
    for line in out.stdout.splitlines():
        match = PERFTEST_FINAL.match(line)
        if match:
            return float(match[5]) * (1 << 20) / 1e9  # average MiB/s
    raise bc.RunFailure(f"ucx_perftest gave no Final line:\n{out.stdout[-800:]}"
                        f"{out.stderr[-800:]}")


def link_gbps(build, transport, sizes, log_dir):
    """build/bench/link-bandwidth: GB/s per size."""
    json_path = log_dir / f"link-{transport}.jsonl"
    command = [str(build / "bench" / "link-bandwidth"), "--transport",
               transport, "--sizes", ",".join(str(s) for s in sizes),
               "--json", str(json_path)]
    env = dict(os.environ, UCX_TLS="tcp")
    code = bc.run_logged(command, env, log_dir / f"link-{transport}.log", 600)
    if code != 0:
        raise bc.RunFailure(f"link-bandwidth --transport {transport}: exit "
                            f"{code} (log {log_dir}/link-{transport}.log)")
    return {r["bytes"]: r["GBps"] for r in bc.read_json_lines(json_path)}


def netns_allreduce(build, transport, log_dir):
    """2+2 CPU ranks in two namespaces: out-of-place busbw per size."""
    script = bc.REPO / "tests" / "netns" / "run_two_hosts.sh"
    rank_env = "HETCCL_TRANSPORT=" + transport
    if transport == "ucx":
        rank_env += " UCX_TLS=tcp"
    env = dict(os.environ,
               HETCCL_NETNS_LAYOUTS="2+2",
               HETCCL_NETNS_RANK_ENV=rank_env,
               HETCCL_NETNS_PERF_ARGS="-x allreduce -d float32 -o sum -b 16M "
                                      "-e 256M -f 4 -w 2 -n 5 --check 0",
               HETCCL_NETNS_MIN_BYTES=str(16 << 20),
               HETCCL_NETNS_PORT="29800")
    log_path = log_dir / f"netns-{transport}.log"
    code = bc.run_logged(["bash", str(script),
                          str(build / "tools" / "hetccl-perf")], env,
                         log_path, 600)
    if code == 77:
        return None
    if code != 0:
        raise bc.RunFailure(f"netns all-reduce over {transport}: exit {code} "
                            f"(log {log_path})")
    rows = {}
    for line in log_path.read_text().splitlines():
        match = PERF_ROW.match(line)
        if match:
            rows[int(match[1])] = float(match[2])
    if not rows:
        raise bc.RunFailure(f"netns all-reduce over {transport}: no result "
                            f"rows (log {log_path})")
    return rows


def best(rounds):
    table = {}
    for result in rounds:
        for size, value in result.items():
            table[size] = max(table.get(size, 0.0), value)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(bc.REPO / "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="4M,16M,64M,256M")
    parser.add_argument("--out")
    args = parser.parse_args()
    build = Path(args.build)
    sizes = [bc.parse_size(s) for s in args.sizes.split(",")]
    if not shutil.which("ucx_perftest"):
        bc.die("ucx_perftest not found (Debian: apt-get install ucx-utils)")
    log_dir = Path(subprocess.run(["mktemp", "-d"], capture_output=True,
                                  text=True).stdout.strip())
    start = time.monotonic()
    perftest, ucx, tcp, net_tcp, net_ucx = [], [], [], [], []
    for round_index in range(args.rounds):
        bc.log(f"round {round_index + 1} of {args.rounds}")
        perftest.append({s: perftest_gbps(s, max(8, (2 << 30) // s),
                                          13337 + round_index, log_dir)
                         for s in sizes})
        ucx.append(link_gbps(build, "ucx", sizes, log_dir))
        tcp.append(link_gbps(build, "tcp", sizes, log_dir))
    for round_index in range(max(1, args.rounds - 1)):
        for transport, rounds in (("tcp", net_tcp), ("ucx", net_ucx)):
            rows = netns_allreduce(build, transport, log_dir)
            if rows is not None:
                rounds.append(rows)
    perftest, ucx, tcp = best(perftest), best(ucx), best(tcp)
    net_tcp, net_ucx = best(net_tcp), best(net_ucx)

    misses = []
    parts = [
        "# UCX link vs ucx_perftest and the tcp link",
        "",
        f"- Command: `python3 bench/ucx_link_compare.py --rounds "
        f"{args.rounds} --sizes {args.sizes}`",
        f"- Machine: {bc.cpu_model()}, {os.cpu_count()} cores; load "
        f"{bc.load_average()}; HetCCL {bc.hetccl_commit()}; UCX "
        f"{bc.first_lines(['ucx_info', '-v'])[0]}",
        f"- Best of {args.rounds} alternating rounds; GB/s = 10^9 bytes/s.",
        "",
        "## Link bandwidth, one direction, two processes (UCX_TLS=tcp)",
        "",
        "| size | ucx_perftest tag_bw | HetCCL ucx | HetCCL tcp | ucx / "
        "perftest | ucx / tcp |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in sizes:
        ratio_perftest = ucx[s] / perftest[s]
        ratio_tcp = ucx[s] / tcp[s]
        parts.append(f"| {bc.format_bytes(s)} | {perftest[s]:.2f} | "
                     f"{ucx[s]:.2f} | {tcp[s]:.2f} | {ratio_perftest:.2f} | "
                     f"{ratio_tcp:.2f} |")
        if ratio_perftest < 0.9:
            misses.append(f"{bc.format_bytes(s)}: ucx link {ratio_perftest:.2f}"
                          f"x ucx_perftest (target 0.9x)")
        if ratio_tcp < 1.0:
            misses.append(f"{bc.format_bytes(s)}: ucx link {ratio_tcp:.2f}x "
                          f"the tcp link (target 1.0x)")
    parts += ["", "## Cross-domain all-reduce, 2+2 CPU ranks in two network "
              "namespaces", ""]
    if not net_tcp or not net_ucx:
        parts += ["Not run: network namespaces need root.", ""]
    else:
        parts += ["| size | busbw tcp | busbw ucx | ucx / tcp |",
                  "| ---: | ---: | ---: | ---: |"]
        for s in sorted(net_tcp):
            if s not in net_ucx:
                continue
            ratio = net_ucx[s] / net_tcp[s]
            parts.append(f"| {bc.format_bytes(s)} | {net_tcp[s]:.2f} | "
                         f"{net_ucx[s]:.2f} | {ratio:.2f} |")
            if ratio < 1.0:
                misses.append(f"2+2 all-reduce {bc.format_bytes(s)}: ucx "
                              f"{ratio:.2f}x tcp (target 1.0x)")
        parts.append("")
    parts += bc.summary_section([], misses, "Missed targets:",
                                "Every target met.")
    path = bc.report_path(args.out, "ucx-link")
    bc.write_report_file(path, parts)
    bc.chart_hint(path)
    return bc.log_outcome(["\n".join(parts)], misses, [],
                          f"KEY ucx/perftest {min(ucx[s] / perftest[s] for s in sizes):.2f}",
                          path, time.monotonic() - start)


if __name__ == "__main__":
    raise SystemExit(main())
