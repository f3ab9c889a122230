"""Routing lab: offer retrieval's first candidate alone when it leads the second widely.

    python bench/labs/routing_lead.py --lead 1.0 --data ../shared/bench/metatool \
        --half report --limit 60 -v

bench/routing.py with one change to what is offered: when the first candidate's score
leads the second's by at least ``--lead``, only the first is offered, so the model
decides between calling it and ``none``; otherwise every candidate is offered as
before. The other arguments are bench/routing.py's; its JSON report is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import routing
from plugyard.routing.choice import Candidate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lead", type=float, default=1.0)
    args, rest = parser.parse_known_args()
    plain = routing.retrieve

    def led(*given: Any) -> Sequence[Candidate]:
        found = plain(*given)
        if len(found) > 1 and found[0].score - found[1].score >= args.lead:
            return found[:1]
        return found

    routing.retrieve = led  # type: ignore[assignment]
    routing.main([*rest, "--json"])


if __name__ == "__main__":
    main()
