"""How long the ``plugyard`` command takes to start, as a user runs it.

    bash scripts/bench.sh cli_start                     # 10,000 plugin folders
    bash scripts/bench.sh cli_start --plugins 1000 --runs 7

Builds a temporary plugin folder of N plugins (``tool/pNNNNN/``: a HomeClaw
``plugin.yaml`` and the ``plugin.py`` beside it) and a temporary data folder, then runs
each command as a real process — the same ``main()`` the console script calls, with the
interpreter running this script — and prints the median wall time of several runs, and
their median CPU time (user and system), which a busy machine disturbs less.

Rows: ``--version`` and ``--help`` (targets ≤ 0.2 s); ``plugins list`` on the first
start (every folder read, every plugin's code checked), then warm (a second start over
the same folders; target ≤ 1 s for 10,000), and after one plugin's code was edited.
This script imports nothing of plugyard itself, so it times whichever plugyard the
interpreter finds first (``PYTHONPATH``) — a tree before a change and after it alike.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

MAIN = "import sys; from plugyard.cli.main import main; sys.exit(main())"
MANIFEST = """\
id: {id}
name: Plugin {n}
description: Benchmark plugin number {n}. Use when nothing else fits.
capabilities:
  - id: run
    description: Echo the text.
    parameters:
      - name: text
        type: string
        description: Any text.
"""
CODE = "def run(text: str) -> dict:\n    return {{'text': text, 'n': {n}}}\n"
# Old enough that no start takes these files for ones being written right now.
SETTLED_S = 60.0


def build(root: Path, count: int) -> Path:
    """``count`` plugin folders under ``root/plugins``; their files dated a minute ago."""
    plugins = root / "plugins"
    then = time.time() - SETTLED_S
    for n in range(count):
        folder = plugins / "tool" / f"p{n:05d}"
        folder.mkdir(parents=True)
        for name, text in (("plugin.yaml", MANIFEST), ("plugin.py", CODE)):
            path = folder / name
            path.write_text(text.format(id=f"p{n:05d}", n=n))
            os.utime(path, (then, then))
    return plugins


Times = tuple[float, float]  # wall seconds, CPU seconds (user + system) of the process


def timed(args: list[str], env: Mapping[str, str]) -> Times:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"plugyard {' '.join(args)} failed:\n{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def median(args: list[str], env: Mapping[str, str], runs: int) -> Times:
    found = [timed(args, env) for _ in range(runs)]
    return statistics.median(w for w, _ in found), statistics.median(c for _, c in found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugins", type=int, default=10_000, help="plugin folders")
    parser.add_argument("--runs", type=int, default=5, help="runs per row (median)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="plugyard-bench-") as tmp:
        root = Path(tmp)
        plugins = build(root, args.plugins)
        env = {
            **os.environ,
            "PLUGYARD_HOME": str(root / "home"),
            "PLUGYARD_PLUGIN_DIRS": str(plugins),
            # Where a version without PLUGYARD_HOME keeps its default store.
            "PLUGYARD_DATABASE_URL": str(root / "home" / "plugyard.db"),
        }
        rows: list[tuple[str, Callable[[], Times]]] = [
            ("plugyard --version", lambda: median(["--version"], env, args.runs)),
            ("plugyard --help", lambda: median(["--help"], env, args.runs)),
            ("plugyard plugins list, first start", lambda: timed(["plugins", "list"], env)),
            ("plugyard plugins list, warm", lambda: median(["plugins", "list"], env, args.runs)),
            ("plugyard plugins list, one plugin edited", lambda: edited(plugins, env)),
        ]
        print(f"| command ({args.plugins:,} plugin folders) | wall s | CPU s |")
        print("| --- | --- | --- |")
        for title, measure in rows:
            wall, cpu = measure()
            print(f"| {title} | {wall:.3f} | {cpu:.3f} |", flush=True)


def edited(plugins: Path, env: Mapping[str, str]) -> Times:
    """A start after one plugin's code changed: that folder is read again."""
    code = plugins / "tool" / "p00000" / "plugin.py"
    code.write_text(CODE.format(n=-1))
    then = time.time() - SETTLED_S / 2
    os.utime(code, (then, then))
    return timed(["plugins", "list"], env)


if __name__ == "__main__":
    main()
