#!/usr/bin/env python3
"""ctest charts_from_a_record: bench/charts.py on the recorded fixtures here.

Checks that the sample record gives a PNG and an SVG per collective, that
the PNG is one, that the SVG names both series as text (without the labels'
round suffixes) and the ceiling given with --ceiling, and that a record
without raw JSON is skipped with a message and exit status 0.

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
CHARTS = HERE.parent.parent / "bench" / "charts.py"
SAMPLE = HERE / "sample-record.md"
WITHOUT_JSON = HERE / "record-without-json.md"
SERIES = ("hetccl-shm", "nccl-host")
CEILING = ("test ceiling", "30")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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
    result = run_charts(python, "--require", "--out-dir", out_dir,
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


def check_without_json(python, out_dir):
    """The problems with charts.py on a record without raw JSON."""
    result = run_charts(python, "--out-dir", out_dir, WITHOUT_JSON)
    problems = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode} on {WITHOUT_JSON.name}")
    if "no raw JSON results; skipped" not in result.stdout:
        problems.append(f"no skip message for {WITHOUT_JSON.name}")
    if any(out_dir.iterdir()):
        problems.append(f"files written for {WITHOUT_JSON.name}")
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
        sample_dir, empty_dir = Path(tmp) / "sample", Path(tmp) / "empty"
        empty_dir.mkdir()
        problems = check_sample(python, sample_dir)
        problems += check_without_json(python, empty_dir)
    for problem in problems:
        print(f"FAIL: {problem}")
    print("FAIL" if problems else "PASS: charts_from_a_record")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
