#!/usr/bin/env python3
"""Charts of the benchmark records: bus bandwidth and time against size.

A record (bench/results/*.md) keeps its raw measurements as one JSON object
per line in a fenced block, each run's lines after a "# label" line where the
script names its runs. This script reads those lines back, so that a chart
can always be redrawn from the record alone, and draws per collective one
line per series (the label without its round suffix, else the `impl` field
and whatever else tells the runs apart), the median where a series has
several rounds of a size.

    bench/charts.py bench/results/host-allreduce-2026-11-29.md
    bench/charts.py --out /tmp/charts RECORD   # into a directory of your own
    bench/charts.py --all                  # every record with raw JSON
    bench/charts.py --summary              # the four charts of docs/results.md
    bench/charts.py --readme               # docs/charts/hetero-2gpu.svg
    bench/charts.py --ceiling "copy ceiling=37.2" RECORD
    bench/charts.py --sim a.json b.json    # hetccl-sim --json output

With --sim the files are hetccl-sim's JSON lines (or records holding them
in fenced blocks), of one cluster each or several: per collective, busbw
against size with a line per cluster, and busbw against the rank count
with a line per size, each beside its dashed yardstick (issue #32's ideal
for the same cluster, tools/sim/ideal.h).

Charts are drawn on demand and not committed: this writes
<record>-<collective>.png and .svg (--format chooses) into --out, by
default bench/charts/ (ignored by git), and prints each file written. The
one committed chart is the README's, docs/charts/hetero-2gpu.svg, which
--readme redraws from its record. Needs python3-matplotlib: without it the
script says so and exits 0 (1 with --require).
"""

import argparse
import ast
import json
import math
import re
import statistics
import sys
from collections import namedtuple
from pathlib import Path

from bench_common import REPO, format_bytes

RESULTS = REPO / "bench" / "results"
# Where charts go unless --out says otherwise (listed in .gitignore).
DEFAULT_OUT = REPO / "bench" / "charts"
README_CHART_DIR = REPO / "docs" / "charts"
FORMATS = ("png", "svg")
MISSING_MATPLOTLIB = (
    "charts: python3-matplotlib is not installed "
    "(apt-get install python3-matplotlib); no charts written")

COPY_CEILING = ("host-path copy ceiling per GPU and direction, 2 GPUs busy "
                "(gpu-copy-paths-2026-11-30)", 37.2)

# Known bus-bandwidth ceilings, by the start of a record's name.
CEILINGS = {
    "gpu-hetero-allreduce": [COPY_CEILING],
}

# The summary charts of docs/results.md (--summary): file stem, record,
# collective, title, {series: legend name} (the series drawn, in this
# order), ceilings.
SUMMARY_LINE_CHARTS = [
    ("passthrough-vs-nccl", "gpu-sweep-2026-11-30", "allreduce",
     "All-reduce on 2 H200s: HetCCL pass-through vs NVIDIA NCCL",
     {"hetccl": "HetCCL (pass-through)", "native": "NVIDIA NCCL"}, []),
    ("hetero-2gpu", "gpu-hetero-allreduce-2026-11-30", "allreduce",
     "All-reduce on 2 H200s as 2 domains (through host memory)",
     {"hetccl-shm": "HetCCL, 2 domains over shm",
      "nccl-host": "NVIDIA NCCL, host path (P2P off)",
      "gloo": "Gloo (PyTorch, CUDA tensors)"}, [COPY_CEILING]),
    ("host-allreduce", "host-allreduce-2026-11-29", "allreduce",
     "Host all-reduce, 2 CPU ranks: HetCCL vs OpenMPI and Gloo",
     {"hetccl, 2 ranks": "HetCCL", "openmpi, 2 ranks": "OpenMPI (vader)",
      "gloo, 2 ranks": "Gloo (ring, TCP loopback)"}, []),
]
# The cross-host summary chart: bars per collective at a few sizes.
SUMMARY_BAR_CHART = (
    "cross-host", "gpu-network-compare-2026-11-30-chunk16m",
    "2 H200s as 2 pretend hosts over TCP (loopback)", (64 << 20, 256 << 20),
    {"hetccl-tcp": "HetCCL tcp",
     "nccl-default": "NVIDIA NCCL sockets, default",
     "nccl-4x1": "NVIDIA NCCL sockets, 4 sockets x 1 thread"})
# The README's chart (--readme), one of the summary's line charts: the only
# chart kept in the repository, as SVG in docs/charts.
README_CHART = "hetero-2gpu"

# A label's round suffix ("-r1", " (counted: yes)"): rounds of one series.
ROUND_SUFFIX = re.compile(r"(-r\d+)?(\s*\(counted: \w+\))?\s*$")
# Parts of a label that name a size range of one series (gpu_sweep.py).
SIZE_RANGE_PARTS = {"small", "large"}
# Fields that tell unlabelled runs apart, as shown in a series name.
DISTINGUISHING_FIELDS = {
    "build": str,
    "nranks": lambda n: f"{n} ranks",
    "inplace": lambda v: "in place" if v else "out of place",
}

Point = namedtuple("Point", "series coll bytes busbw time_us")
Entry = namedtuple("Entry", "label result")


# ----------------------------------------------------------------------------
# Reading a record.

def fenced_blocks(text):
    """The lines of each fenced code block (``` ... ```) of a markdown text."""
    block = None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if block is None:
                block = []
            else:
                yield block
                block = None
        elif block is not None:
            block.append(line.strip())


def parse_object(line):
    """A result line: JSON, or a Python dict literal (compare_builds.py
    writes str(record)); None for any other line."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(line)
        except (ValueError, SyntaxError):
            continue
        return value if isinstance(value, dict) else None
    return None


def is_result(obj):
    return "bytes" in obj and ("busbw_GBps" in obj or "time_us" in obj)


def nested_results(obj):
    """Results listed inside an object, named by their key: the Gloo
    all-reduce of gpu_hetero_allreduce.py's PyTorch worker is
    {"gloo": [{"bytes":..., "busbw_GBps":...}, ...], "copies": ...}."""
    for key, value in obj.items():
        if isinstance(value, list) and value and all(
                isinstance(item, dict) and "bytes" in item
                and "busbw_GBps" in item for item in value):
            for item in value:
                yield Entry(key, {"impl": key, **item})


def record_entries(text):
    """Every result of a record with the label of the run it belongs to
    (None before any label). Rounds marked "(counted: no)" are left out."""
    entries = []
    for block in fenced_blocks(text):
        label = None
        for line in block:
            if line.startswith("#"):
                label = line.lstrip("#").strip() or None
                continue
            obj = parse_object(line) if line.startswith("{") else None
            if obj is None or (label and "(counted: no)" in label):
                continue
            if is_result(obj):
                entries.append(Entry(label, obj))
            else:
                entries.extend(nested_results(obj))
    return entries


def label_series(label, coll):
    """The series a label names: without its round suffix, the collective
    (each chart is of one) and the size range."""
    parts = ROUND_SUFFIX.sub("", label).split("-")
    kept = [p for p in parts if p != coll and p not in SIZE_RANGE_PARTS]
    return "-".join(kept) or label


def varying_fields(results):
    """The distinguishing fields whose value differs between the results
    that have them (OpenMPI's and Gloo's results have no "inplace")."""
    return [name for name in DISTINGUISHING_FIELDS
            if len({repr(r[name]) for r in results if name in r}) > 1]


def unlabelled_series(results):
    """Series names for results without a label: `impl` and the fields
    that differ, then "run 2", "run 3"... where the same size comes again
    without a round field to tell it apart (two runs written one after the
    other, as compare_hetero_allreduce.py does)."""
    fields = varying_fields(results)
    names, runs, seen = [], {}, {}
    for result in results:
        base = ", ".join([str(result.get("impl", "?"))] + [
            DISTINGUISHING_FIELDS[f](result[f]) for f in fields
            if f in result])
        key = (result.get("coll"), result["bytes"], result.get("inplace"),
               result.get("round"))
        if key in seen.setdefault(base, set()):
            runs[base] = runs.get(base, 1) + 1
            seen[base] = set()
        seen[base].add(key)
        run = runs.get(base, 1)
        names.append(base if run == 1 else f"{base}, run {run}")
    return names


def read_points(path):
    """The results of a record as Points; a result without a collective
    takes the record's one collective (or is dropped if it has several)."""
    entries = record_entries(Path(path).read_text(errors="replace"))
    colls = {e.result["coll"] for e in entries if "coll" in e.result}
    only_coll = colls.pop() if len(colls) == 1 else None
    unlabelled = [e.result for e in entries if e.label is None]
    unlabelled_names = iter(unlabelled_series(unlabelled))
    points = []
    for label, result in entries:
        coll = result.get("coll", only_coll)
        series = (next(unlabelled_names) if label is None
                  else label_series(label, coll))
        if coll is not None:
            points.append(Point(series, coll, result["bytes"],
                                result.get("busbw_GBps"),
                                result.get("time_us")))
    return points


def curve_values(curves):
    return [value for curve in curves.values() for _, value in curve]


def collectives(points):
    return list(dict.fromkeys(p.coll for p in points))


def series_curves(points, coll, metric):
    """{series: [(bytes, median of `metric`)]} for one collective, series
    in the order of the record, sizes ascending."""
    values = {}
    for p in points:
        value = getattr(p, metric)
        if p.coll == coll and value is not None:
            values.setdefault(p.series, {}).setdefault(p.bytes, []).append(
                value)
    return {series: [(size, statistics.median(v))
                     for size, v in sorted(by_size.items())]
            for series, by_size in values.items()}


# ----------------------------------------------------------------------------
# Drawing.

def load_pyplot():
    """matplotlib.pyplot on the Agg backend, set to write SVG text as text
    (the series names stay searchable) and the same SVG from the same data;
    None if matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none",
                                "svg.hashsalt": "hetccl-charts",
                                "font.sans-serif": ["DejaVu Sans"],
                                "font.size": 9, "axes.grid": True,
                                "grid.alpha": 0.3})
    import matplotlib.pyplot as pyplot
    return pyplot


def size_label(size):
    text = format_bytes(size)
    return text if text[-1].isalpha() else f"{text}B"


def plain_number(value, _position=None):
    return f"{value:,.10g}"


def twos_and_fives(value, _position=None):
    mantissa = value / 10 ** math.floor(math.log10(value))
    return plain_number(value) if round(mantissa) in (2, 5) else ""


def set_size_axis(axis, sizes):
    """Log2 sizes labelled 8B, 1K, 1M, 1G: at every size measured where
    there are at most 12, else at powers of two whose exponent is a
    multiple of a step (so that round sizes such as 1K and 1G show)."""
    sizes = sorted(set(sizes))
    low, high = sizes[0].bit_length() - 1, sizes[-1].bit_length() - 1
    if len(sizes) <= 12:
        ticks = sizes
    else:
        step = next(s for s in (2, 3, 5, 10) if (high - low) // s < 12)
        ticks = [1 << e for e in range(low, high + 1) if e % step == 0]
    axis.set_xscale("log", base=2)
    axis.set_xticks(ticks, [size_label(t) for t in ticks])
    axis.set_xticks([1 << e for e in range(low, high + 1)], minor=True)
    axis.tick_params(axis="x", which="minor", labelbottom=False)
    axis.set_xlim(sizes[0] / 1.3, sizes[-1] * 1.3)


def set_value_axis(axis, values, log_above):
    """A log scale, with plain numbers rather than powers of ten, where the
    values span more than `log_above` times; else linear from 0. A log
    scale of less than two decades has too few powers of ten to read, so
    its 2s and 5s are labelled too."""
    positive = [v for v in values if v > 0]
    if not positive:
        return
    span = max(positive) / min(positive)
    if span > log_above:
        axis.set_yscale("log")
        axis.yaxis.set_major_formatter(plain_number)
        if span < 100:
            axis.yaxis.set_minor_formatter(twos_and_fives)
    else:
        axis.set_ylim(0, max(positive) * 1.1)


def series_colors(series):
    """A colour per series, so that a series keeps its colour in every
    chart of a record, whichever series a collective lacks."""
    return {name: f"C{index % 10}"
            for index, name in enumerate(dict.fromkeys(series))}


def draw_curves(axis, curves, colors, names=None):
    for series, curve in curves.items():
        axis.plot([s for s, _ in curve], [v for _, v in curve], marker="o",
                  markersize=3, linewidth=1.5, color=colors[series],
                  label=(names or {}).get(series, series))


def draw_ceilings(axis, ceilings):
    for label, gbps in ceilings:
        axis.axhline(gbps, linestyle="--", color="0.35", linewidth=1,
                     label=f"{label}: {gbps:g} GB/s")


BUSBW_LABEL = "busbw (GB/s, 10^9 B/s)"
TIME_LABEL = "time per operation (µs)"
SIZE_LABEL = "message size (bytes, log2 scale)"


def legend_below(figure, axes):
    """One legend for the axes, under the plots, where it hides no data."""
    entries = {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    labels, handles = list(entries), list(entries.values())
    columns = 1 if max(map(len, labels), default=0) > 40 else 2
    rows = -(-len(labels) // columns)
    height = (0.05 + 0.17 * rows) / figure.get_figheight()
    figure.legend(handles, labels, loc="lower center", ncol=columns,
                  fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, height, 1, 1))


def save(figure, pyplot, stem, formats=FORMATS):
    """Writes the figure as stem.<format> for each of `formats` (png, svg);
    returns the paths."""
    paths = []
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        figure.savefig(path, dpi=100, metadata={"Date": None} if fmt == "svg"
                       else None)
        paths.append(path)
    pyplot.close(figure)
    return paths


def collective_chart(pyplot, record_name, points, coll, ceilings, stem,
                     formats=FORMATS):
    """Bus bandwidth (above) and time (below) against size for one
    collective of a record, sharing the size axis; log scales from 10x,
    as a record's series can be 100x apart (NVLink beside a socket)."""
    busbw = series_curves(points, coll, "busbw")
    times = series_curves(points, coll, "time_us")
    figure, (top, bottom) = pyplot.subplots(2, 1, sharex=True,
                                            figsize=(7, 6.5))
    colors = series_colors(p.series for p in points)
    draw_curves(top, busbw, colors)
    draw_ceilings(top, ceilings)
    draw_curves(bottom, times, colors)
    sizes = [p.bytes for p in points if p.coll == coll]
    set_size_axis(bottom, sizes)
    set_value_axis(top, curve_values(busbw) + [g for _, g in ceilings],
                   log_above=10)
    set_value_axis(bottom, curve_values(times), log_above=10)
    top.set_ylabel(BUSBW_LABEL)
    bottom.set_ylabel(TIME_LABEL)
    bottom.set_xlabel(SIZE_LABEL)
    top.set_title(f"{record_name}: {coll}")
    legend_below(figure, (top, bottom))
    return save(figure, pyplot, stem, formats)


def record_charts(pyplot, record, out_dir=DEFAULT_OUT, extra_ceilings=(),
                  formats=FORMATS):
    """The charts of one record into out_dir, one file per collective and
    format; returns the paths written ([] for a record without raw JSON,
    and then nothing is created)."""
    record = Path(record)
    points = read_points(record)
    ceilings = [c for prefix, known in CEILINGS.items()
                if record.stem.startswith(prefix) for c in known]
    ceilings += list(extra_ceilings)
    directory = Path(out_dir)
    paths = []
    for coll in collectives(points):
        directory.mkdir(parents=True, exist_ok=True)
        paths += collective_chart(pyplot, record.stem, points, coll, ceilings,
                                  directory / f"{record.stem}-{coll}", formats)
    return paths


def summary_line_chart(pyplot, chart, out_dir, formats=FORMATS):
    """One summary chart: the bus bandwidth of the chosen series."""
    stem, record, coll, title, names, ceilings = chart
    points = read_points(RESULTS / f"{record}.md")
    curves = series_curves(points, coll, "busbw")
    missing = [s for s in names if s not in curves]
    if missing:
        raise SystemExit(f"charts: {record} has no series {missing}")
    curves = {s: curves[s] for s in names}
    figure, axis = pyplot.subplots(figsize=(7, 5))
    draw_curves(axis, curves, series_colors(names), names)
    draw_ceilings(axis, ceilings)
    set_size_axis(axis, [s for c in curves.values() for s, _ in c])
    set_value_axis(axis, curve_values(curves), log_above=100)
    axis.set_xlabel(SIZE_LABEL)
    axis.set_ylabel(BUSBW_LABEL)
    axis.set_title(f"{title}\n(record {record}; median of the rounds)",
                   fontsize=9)
    legend_below(figure, (axis,))
    return save(figure, pyplot, out_dir / stem, formats)


def summary_bar_chart(pyplot, out_dir, formats=FORMATS):
    """The cross-host chart: per size a panel, per collective a group of
    bars, one bar per series (the median of its rounds)."""
    stem, record, title, sizes, names = SUMMARY_BAR_CHART
    points = read_points(RESULTS / f"{record}.md")
    colls = [c for c in collectives(points)
             if all(series_value(points, s, c, sizes[0]) for s in names)]
    figure, axes = pyplot.subplots(len(sizes), 1, figsize=(7, 6),
                                   sharex=True)
    width = 0.8 / len(names)
    for axis, size in zip(axes, sizes):
        for index, (series, name) in enumerate(names.items()):
            values = [series_value(points, series, c, size) or 0
                      for c in colls]
            xs = [i + (index - (len(names) - 1) / 2) * width
                  for i in range(len(colls))]
            bars = axis.bar(xs, values, width, label=name)
            axis.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
        axis.set_ylabel(f"busbw at {size_label(size)} (GB/s, 10^9 B/s)")
        axis.margins(y=0.15)
    axes[-1].set_xticks(range(len(colls)), colls)
    axes[0].set_title(f"{title}\n(record {record}; median of the rounds)",
                      fontsize=9)
    axes[0].legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    return save(figure, pyplot, out_dir / stem, formats)


def series_value(points, series, coll, size):
    """The median bus bandwidth of one series at one size, or None."""
    values = [p.busbw for p in points if (p.series, p.coll, p.bytes) ==
              (series, coll, size) and p.busbw is not None]
    return statistics.median(values) if values else None


# ----------------------------------------------------------------------------
# hetccl-sim's results (--sim).

SIM_FIELDS = {"collective", "size", "busbw_GBps", "time_us", "ideal_us",
              "ranks", "domains"}


# Per chart kind: the series a result belongs to, and its x.
SIM_AXES = {
    "size": (lambda r: f"{r['ranks']} ranks, {r['domains']} domains",
             lambda r: r["size"]),
    "ranks": (lambda r: size_label(r["size"]), lambda r: r["ranks"]),
}


def sim_results(path):
    """hetccl-sim's JSON lines in a file of them or in a record's fenced
    blocks."""
    path = Path(path)
    text = path.read_text(errors="replace")
    lines = (text.splitlines() if path.suffix == ".json"
             else [line for block in fenced_blocks(text) for line in block])
    results = []
    for line in lines:
        obj = parse_object(line.strip()) if line.strip().startswith("{") \
            else None
        if obj is not None and SIM_FIELDS <= obj.keys():
            results.append(obj)
    return results


def yardstick_busbw(result):
    """The busbw the operation would have at the yardstick's time."""
    return result["busbw_GBps"] * result["time_us"] / result["ideal_us"]


def sim_curves(results, series_of, x_of):
    """({series: [(x, busbw)]}, {series: [(x, yardstick busbw)]}), x
    ascending."""
    simulated, ideal = {}, {}
    for result in results:
        series = series_of(result)
        simulated.setdefault(series, []).append(
            (x_of(result), result["busbw_GBps"]))
        ideal.setdefault(series, []).append(
            (x_of(result), yardstick_busbw(result)))
    return ({s: sorted(c) for s, c in simulated.items()},
            {s: sorted(c) for s, c in ideal.items()})


def set_ranks_axis(axis, ranks):
    ranks = sorted(set(ranks))
    axis.set_xscale("log", base=2)
    axis.set_xticks(ranks, [plain_number(r) for r in ranks])
    axis.set_xlim(ranks[0] / 1.3, ranks[-1] * 1.3)


def sim_chart(pyplot, results, coll, by, stem, formats):
    """busbw of one collective against size (a line per cluster) or
    against the rank count (a line per size), yardsticks dashed."""
    series_of, x_of = SIM_AXES[by]
    results = sorted(results,
                     key=lambda r: (r["ranks"], r["domains"], r["size"]))
    simulated, ideal = sim_curves(results, series_of, x_of)
    colors = series_colors(simulated)
    figure, axis = pyplot.subplots(figsize=(7, 5))
    draw_curves(axis, simulated, colors)
    for series, curve in ideal.items():
        axis.plot([x for x, _ in curve], [v for _, v in curve],
                  linestyle="--", linewidth=1, color=colors[series],
                  label=f"{series}, yardstick")
    xs = [x for curve in simulated.values() for x, _ in curve]
    if by == "size":
        set_size_axis(axis, xs)
        axis.set_xlabel(SIZE_LABEL)
    else:
        set_ranks_axis(axis, xs)
        axis.set_xlabel("ranks (log2 scale)")
    set_value_axis(axis, curve_values(simulated) + curve_values(ideal),
                   log_above=10)
    axis.set_ylabel(BUSBW_LABEL)
    axis.set_title(f"hetccl-sim: {coll}, busbw against {by} "
                   "(model figures)")
    legend_below(figure, (axis,))
    return save(figure, pyplot, stem, formats)


def sim_charts(pyplot, paths, out_dir, formats):
    """Per collective, the by-size chart and, where the results hold more
    than one rank count, the by-ranks chart; returns the paths."""
    results = [r for path in paths for r in sim_results(path)]
    if not results:
        raise SystemExit("charts: no hetccl-sim results in "
                         f"{', '.join(str(p) for p in paths)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for coll in dict.fromkeys(r["collective"] for r in results):
        mine = [r for r in results if r["collective"] == coll]
        written += sim_chart(pyplot, mine, coll, "size",
                             out_dir / f"sim-{coll}-by-size", formats)
        if len({r["ranks"] for r in mine}) > 1:
            written += sim_chart(pyplot, mine, coll, "ranks",
                                 out_dir / f"sim-{coll}-by-ranks", formats)
    return written


# ----------------------------------------------------------------------------
# The command line.

def parse_ceiling(text):
    """--ceiling "LABEL=GBPS" as (label, GB/s)."""
    label, _, value = text.rpartition("=")
    try:
        gbps = float(value)
    except ValueError:
        gbps = None
    if gbps is None or not label.strip():
        raise argparse.ArgumentTypeError(f"not LABEL=GBPS: {text}")
    return label.strip(), gbps


def parse_formats(text):
    """--format "png,svg" as a tuple of known formats."""
    formats = tuple(dict.fromkeys(f.strip() for f in text.split(",")
                                  if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if not formats or unknown:
        raise argparse.ArgumentTypeError(
            f"not a list of {' and '.join(FORMATS)}: {text}")
    return formats


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="*", help="record files (.md)")
    parser.add_argument("--all", action="store_true",
                        help="every record in bench/results")
    parser.add_argument("--summary", action="store_true",
                        help="the four summary charts of docs/results.md")
    parser.add_argument("--readme", action="store_true",
                        help="the README's chart, as SVG into docs/charts "
                        "(or --out)")
    parser.add_argument("--out", "--out-dir", dest="out", type=Path,
                        help="directory to write into (default: "
                        f"{DEFAULT_OUT.relative_to(REPO)}/, ignored by git)")
    parser.add_argument("--format", dest="formats", type=parse_formats,
                        metavar="png,svg",
                        help="formats to write (default: png,svg; svg for "
                        "--readme)")
    parser.add_argument("--ceiling", action="append", default=[],
                        type=parse_ceiling, metavar="LABEL=GBPS",
                        help="a bus-bandwidth ceiling to draw (repeatable)")
    parser.add_argument("--require", action="store_true",
                        help="exit 1 if matplotlib is missing")
    parser.add_argument("--sim", nargs="+", type=Path, default=[],
                        metavar="FILE",
                        help="hetccl-sim --json files (or records holding "
                        "its lines): busbw against size and rank count")
    args = parser.parse_args()
    if not (args.records or args.all or args.summary or args.readme
            or args.sim):
        parser.error("give record files, --all, --summary, --readme or "
                     "--sim")
    args.records = [Path(r) for r in args.records]
    if args.all:
        args.records += sorted(RESULTS.glob("*.md"))
    missing = [str(r) for r in args.records + args.sim if not r.is_file()]
    if missing:
        parser.error(f"no such record: {', '.join(missing)}")
    return args


def print_paths(paths):
    for path in paths:
        print(path, flush=True)


def main():
    args = parse_args()
    pyplot = load_pyplot()
    if pyplot is None:
        print(MISSING_MATPLOTLIB)
        return 1 if args.require else 0
    out_dir = args.out or DEFAULT_OUT
    formats = args.formats or FORMATS
    if args.readme:
        readme_dir = args.out or README_CHART_DIR
        readme_dir.mkdir(parents=True, exist_ok=True)
        chart = next(c for c in SUMMARY_LINE_CHARTS if c[0] == README_CHART)
        print_paths(summary_line_chart(pyplot, chart, readme_dir,
                                       args.formats or ("svg",)))
    if args.summary:
        out_dir.mkdir(parents=True, exist_ok=True)
        for chart in SUMMARY_LINE_CHARTS:
            print_paths(summary_line_chart(pyplot, chart, out_dir, formats))
        print_paths(summary_bar_chart(pyplot, out_dir, formats))
    if args.sim:
        print_paths(sim_charts(pyplot, args.sim, out_dir, formats))
    for record in args.records:
        paths = record_charts(pyplot, record, out_dir, args.ceiling, formats)
        if not paths:
            print(f"charts: {record.name}: no raw JSON results; skipped")
        print_paths(paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
