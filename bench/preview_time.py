"""How long the offline preview and the settings layer take, per example stack, measured in one run.

    venv/bin/python bench/preview_time.py [--repeat 5]

Prints the median wall time of loading the settings and of a whole preview (program under mocks + schema
validation + writing files) per stack, and each stack's preview time as a ratio of `dev`'s. A benchmark, not a
test: the numbers depend on the machine; the ratios are what to compare between changes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.settings_loader import load_from_pulumi_config  # noqa: E402
from kvpool.preview import preview  # noqa: E402
from tests.program_runs import stack_values  # noqa: E402

STACKS = ["dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "ucm", "service-set", "service-a"]


def median_seconds(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for stack in STACKS:
            values = stack_values(stack)
            settings_s = median_seconds(lambda v=values, s=stack: load_from_pulumi_config(v, s), args.repeat)
            preview_s = median_seconds(lambda s=stack: preview(ROOT, s, Path(out)), args.repeat)
            rows.append((stack, settings_s, preview_s))
    base = rows[0][2]
    print(f"{'stack':<20} {'settings ms':>12} {'preview ms':>11} {'vs dev':>7}")
    for stack, settings_s, preview_s in rows:
        print(f"{stack:<20} {settings_s * 1000:>12.2f} {preview_s * 1000:>11.1f} {preview_s / base:>7.2f}")


if __name__ == "__main__":
    main()
