#!/usr/bin/env python3
"""ctest charts_from_a_record: bench/charts.py on the recorded fixtures here
and on the records its summary and README charts are drawn from.

Checks, every chart written into a temporary directory given with --out:
- the sample record gives a PNG and an SVG per collective, the PNG is one,
  the SVG names both series as text (without the labels' round suffixes)
  and the ceiling given with --ceiling; with --format svg only SVGs;
- a record without raw JSON is skipped with a message and exit status 0,
  and nothing is written;
- --summary draws its four charts from the records in bench/results (so a
  record they need cannot leave the tree unnoticed);
- --readme draws the README's chart as SVG only, and README.md shows that
  file from docs/charts, where it is committed;
- --sim on hetccl-sim's JSON lines of two clusters (16 and 64 ranks, two
  collectives) draws per collective busbw against size and against the
  rank count, the series and their yardsticks named in the SVG's text.

matplotlib is required (CI installs python3-matplotlib through
scripts/install-deps.sh): without it the test fails and says so. Debian's
package installs into /usr/bin/python3, which is used when the Python
running this test (a pyenv or venv python3 found first on PATH) lacks it.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHARTS = REPO / "bench" / "charts.py"
SAMPLE = HERE / "sample-record.md"
WITHOUT_JSON = HERE / "record-without-json.md"
SIM_SAMPLE = HERE / "sim-sample.json"
SERIES = ("hetccl-shm", "nccl-host")
CEILING = ("test ceiling", "30")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SUMMARY_CHARTS = ("passthrough-vs-nccl", "hetero-2gpu", "host-allreduce",
                  "cross-host")
README_CHART = "hetero-2gpu"


def python_with_matplotlib():
    for python in (sys.executable, "/usr/bin/python3"):
        if Path(python).is_file() and subprocess.run(
                [python, "-c", "import matplotlib"],
                capture_output=True, check=False).returncode == 0:
            return python
    return None


def run_charts(python, *args):
    result = subprocess.run([python, str(CHARTS), *map(str, args)],
                            capture_output=True, text=True, check=False)
    print(f"$ charts.py {' '.join(map(str, args))} -> exit "
          f"{result.returncode}\n{result.stdout}{result.stderr}")
    return result


def check_sample(python, out_dir):
    """The problems with the sample record's charts ([] if none)."""
    result = run_charts(python, "--require", "--out", out_dir,
                        "--ceiling", "=".join(CEILING), SAMPLE)
    if result.returncode != 0:
        return [f"charts.py exited {result.returncode} on {SAMPLE.name}"]
    problems = []
    for coll in ("allreduce", "allgather"):
        png = out_dir / f"sample-record-{coll}.png"
        svg = out_dir / f"sample-record-{coll}.svg"
        for path in (png, svg):
            if not path.is_file() or path.stat().st_size == 0:
                problems.append(f"{path.name}: not written or empty")
            elif str(path) not in result.stdout:
                problems.append(f"{path.name}: written but not printed")
        if png.is_file() and not png.read_bytes().startswith(PNG_SIGNATURE):
            problems.append(f"{png.name}: no PNG signature")
        if svg.is_file():
            text = svg.read_text()
            problems += [f"{svg.name}: no text '{name}'" for name in SERIES
                         if f">{name}<" not in text]
            if "-r1" in text or "counted" in text:
                problems.append(f"{svg.name}: a round suffix in a series name")
            if coll == "allreduce" and f"{CEILING[0]}: {CEILING[1]} GB/s" \
                    not in text:
                problems.append(f"{svg.name}: no ceiling line label")
    return problems


def written(out_dir):
    """The names of the files in out_dir (none if it does not exist)."""
    return sorted(p.name for p in out_dir.iterdir()) if out_dir.is_dir() \
        else []


def check_svg_only(python, out_dir):
    """The problems with --format svg on the sample record."""
    result = run_charts(python, "--format", "svg", "--out", out_dir, SAMPLE)
    want = [f"sample-record-{coll}.svg" for coll in ("allgather", "allreduce")]
    if result.returncode != 0:
        return [f"--format svg: exit {result.returncode}"]
    return [] if written(out_dir) == want else [
        f"--format svg wrote {written(out_dir)}, not {want}"]


def check_without_json(python, out_dir):
    """The problems with charts.py on a record without raw JSON."""
    result = run_charts(python, "--out", out_dir, WITHOUT_JSON)
    problems = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode} on {WITHOUT_JSON.name}")
    if "no raw JSON results; skipped" not in result.stdout:
        problems.append(f"no skip message for {WITHOUT_JSON.name}")
    if written(out_dir):
        problems.append(f"files written for {WITHOUT_JSON.name}")
    return problems


def check_summary(python, out_dir):
    """The problems with --summary: a PNG and an SVG per summary chart."""
    result = run_charts(python, "--summary", "--out", out_dir)
    if result.returncode != 0:
        return [f"--summary: exit {result.returncode}"]
    want = sorted(f"{stem}.{fmt}" for stem in SUMMARY_CHARTS
                  for fmt in ("png", "svg"))
    return [] if written(out_dir) == want else [
        f"--summary wrote {written(out_dir)}, not {want}"]


def check_readme(python, out_dir):
    """The problems with --readme: its chart as SVG only, the one README.md
    shows from docs/charts."""
    result = run_charts(python, "--readme", "--out", out_dir)
    if result.returncode != 0:
        return [f"--readme: exit {result.returncode}"]
    problems = []
    if written(out_dir) != [f"{README_CHART}.svg"]:
        problems.append(f"--readme wrote {written(out_dir)}, not "
                        f"{README_CHART}.svg alone")
    shown = f"(docs/charts/{README_CHART}.svg)"
    if shown not in (REPO / "README.md").read_text():
        problems.append(f"README.md does not show {shown}")
    if not (REPO / "docs" / "charts" / f"{README_CHART}.svg").is_file():
        problems.append(f"docs/charts/{README_CHART}.svg is not there")
    return problems


def check_sim(python, out_dir):
    """The problems with --sim on the simulator's sample lines."""
    result = run_charts(python, "--sim", SIM_SAMPLE, "--format", "svg",
                        "--out", out_dir)
    if result.returncode != 0:
        return [f"--sim: exit {result.returncode}"]
    want = sorted(f"sim-{coll}-by-{by}.svg" for coll in ("allreduce",
                                                         "sendrecv")
                  for by in ("size", "ranks"))
    if written(out_dir) != want:
        return [f"--sim wrote {written(out_dir)}, not {want}"]
    problems = []
    series = {"size": ("16 ranks, 2 domains", "64 ranks, 2 domains"),
              "ranks": ("1M", "32M")}
    for by, names in series.items():
        text = (out_dir / f"sim-allreduce-by-{by}.svg").read_text()
        problems += [f"sim-allreduce-by-{by}.svg: no text '{name}'"
                     for name in names + (f"{names[0]}, yardstick",)
                     if f">{name}<" not in text]
    return problems


def main():
    python = python_with_matplotlib()
    if python is None:
        print("FAIL: matplotlib is not importable by this Python "
              f"({sys.executable}) nor /usr/bin/python3: install "
              "python3-matplotlib (scripts/install-deps.sh)")
        return 1
    print(f"using {python}")
    with tempfile.TemporaryDirectory(prefix="hetccl-charts-") as tmp:
        tmp = Path(tmp)
        problems = check_sample(python, tmp / "sample")
        problems += check_svg_only(python, tmp / "svg")
        problems += check_without_json(python, tmp / "empty")
        problems += check_summary(python, tmp / "summary")
        problems += check_readme(python, tmp / "readme")
        problems += check_sim(python, tmp / "sim")
    for problem in problems:
        print(f"FAIL: {problem}")
    print("FAIL" if problems else "PASS: charts_from_a_record")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
