"""The first `make preview`'s install, cold: a new venv and the runtime requirements with pip's cache off, with
constraints.txt (the Makefile's way) and without it (how it was), alternated.

    venv/bin/python -m bench.first_install [--reps 2]

Each run: `python3 -m venv` then `pip install --no-cache-dir [-c constraints.txt] -r <runtime requirements>`, timed
wall from the venv's creation to pip's exit, as `make preview` runs them. The registry is reached over the network,
so the times carry its speed of the moment; the two ways alternate to share it. Writes
bench/results/first-install.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.preview_vs_deploy import RESULTS, machine, other_load, others_running

PROJECT = Path(__file__).resolve().parent.parent
RUNTIME_REQUIREMENTS = ("requirements.txt", "kvpool/policies/requirements.txt", "kvpool/cli/requirements.txt")
WAYS = {"with constraints.txt": ["-c", "constraints.txt"], "without constraints": []}


def cold_install(constraints: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="first-install-") as folder:
        venv = Path(folder) / "venv"
        start = time.monotonic()
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
        requirements = [argument for name in RUNTIME_REQUIREMENTS for argument in ("-r", name)]
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir",
                        "--disable-pip-version-check", *constraints, *requirements], cwd=PROJECT, check=True)
        return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    reps = parser.parse_args().reps
    load_before, others_before = os.getloadavg(), others_running()
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(reps):
        for way, constraints in WAYS.items():
            times[way].append(cold_install(constraints))
            print(f"{way}: {times[way][-1]:.1f} s", flush=True)
    constrained = statistics.median(times["with constraints.txt"])
    rows = [f"| {way} | {statistics.median(runs):.1f} s ({min(runs):.1f}–{max(runs):.1f}) | "
            f"{statistics.median(runs) / constrained:.2f}x |" for way, runs in times.items()]
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    text = "\n".join([
        "# The first install of `make preview`, cold",
        "",
        f"`venv/bin/python -m bench.first_install --reps {reps}`, {stamp}. Machine: {machine()}.",
        "",
        "A new venv and the runtime requirements (requirements.txt, kvpool/policies/requirements.txt, kvpool/cli/requirements.txt) "
        "with pip's cache off, timed from `python3 -m venv` to pip's exit; the two ways alternate. Median "
        f"(min–max) of {reps} runs each; the ratio is to the constrained install, in the same run.",
        "",
        "| install | wall | ratio |",
        "|---|---|---|",
        *rows,
        "",
        other_load(load_before, others_before, os.getloadavg(), others_running()),
        "",
    ])
    (RESULTS / "first-install.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
