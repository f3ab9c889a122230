"""A benchmark run with the repair round already spent when each request starts: does
the round earn its time? A lab patch of ``routing.loop.Loop.run``; nothing committed
changes.

    python bench/labs/no_repair.py bench/bfcl.py --data ../shared/bench/bfcl \
        --limit 30 --half report --irrelevance 20 --llm embedded:quality --json -v
    python bench/labs/no_repair.py bench/ask.py --deadline 900 --json --verbose

The script named first runs as ``__main__`` in this process (bench/bfcl.py serves the
yard on loopback in-process, so the patch reaches the endpoint), with the rest of the
arguments as its own.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

from plugyard.routing import loop

_run = loop.Loop.run


async def _without_repair(self: loop.Loop, messages: list[Any]) -> loop.Ending:
    self.repaired = True  # the one repair round is spent before the first decision
    return await _run(self, messages)


def main() -> None:
    script = Path(sys.argv[1])
    loop.Loop.run = _without_repair  # type: ignore[method-assign]
    sys.argv = [str(script), *sys.argv[2:]]
    sys.path.insert(0, str(script.resolve().parent))
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
