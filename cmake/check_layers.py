#!/usr/bin/env python3
"""Fails when a source file under src/ includes a header of a layer above its
own. The layers, bottom up, are the folders below; a file may include its own
layer and those beneath it. The build runs this before compiling the core,
so an upward include stops the build with the offending line."""
import pathlib
import re
import sys

LAYERS = ["util", "runtime", "transport", "vendor", "bootstrap", "algo",
          "engine", "core", "api"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main(src: pathlib.Path) -> int:
    errors = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc", ".cu"):
            continue
        own = path.relative_to(src).parts[0]
        if own not in LAYERS:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or match.group(1) not in LAYERS:
                continue
            if LAYERS.index(match.group(1)) > LAYERS.index(own):
                errors.append(f"{path.relative_to(src.parent)}:{number}: layer "
                              f"'{own}' includes '{match.group(1)}', a layer "
                              f"above it ({' < '.join(LAYERS)})")
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
