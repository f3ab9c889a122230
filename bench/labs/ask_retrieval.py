"""Ask lab: what retrieval offers the model for bench/ask.py's requests (no model).

    python bench/labs/ask_retrieval.py [--k 5] [--set main|fresh] [-v]

For each served request: the rank of its expected operation among the candidates
``routing.retrieve`` offers (``-`` when it is not offered); for each request nothing
serves: whether anything was offered; for every request, the operations its parts point
to (``routing.ranked.yard_parts``), and for a request of several needs whether that
plan holds each need's operation. Prints the shares and, with ``-v``, every request.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ask import SETS

from plugyard.discovery.query import allow_all
from plugyard.routing.ranked import yard_parts
from plugyard.routing.retrieve import retrieve
from plugyard.yard import Settings, Yard


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--set", choices=tuple(SETS), default="main")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    first = offered = served = quiet = unserved = planned = covered = 0
    halves = {"tuning": [0, 0], "held-out": [0, 0]}  # expected first, served
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env(database=str(Path(tmp) / "lab.db"))
        with Yard.from_settings(settings) as yard:
            for index, request in enumerate(SETS[args.set]):
                found = retrieve(yard.search, request.text, args.k, allow_all)
                keys = [(c.plugin_id, c.operation.id) for c in found]
                plan = [(c.plugin_id, c.operation.id) for c in
                        yard_parts(yard.search, request.text, allow_all)]  # fmt: skip
                planned += bool(plan)
                needs = [(request.plugin, request.operation)] + [(p, o) for p, o, _ in request.also]
                covered += bool(request.also) and all(n in plan for n in needs)
                if request.plugin is None:
                    unserved += 1
                    quiet += not keys
                    mark = "ok " if not keys else "BAD"
                else:
                    served += 1
                    want = (request.plugin, request.operation)
                    rank = keys.index(want) + 1 if want in keys else 0
                    first += rank == 1
                    half = halves["tuning" if index % 2 == 0 else "held-out"]
                    half[0] += rank == 1
                    half[1] += 1
                    offered += rank > 0
                    mark = "ok " if rank == 1 else ("2+ " if rank else "BAD")
                if args.verbose:
                    pairs = zip(keys, found, strict=True)
                    shown = ", ".join(f"{p}.{o} {c.score:.2f}" for (p, o), c in pairs)
                    print(
                        f"{mark} {request.text[:60]!r}: {shown}" + (f" plan {plan}" if plan else "")
                    )
    print(f"served {served}: expected first {first / served:.3f}, offered {offered / served:.3f}")
    if unserved:
        print(f"unserved {unserved}: nothing offered {quiet / unserved:.3f}")
    several = sum(bool(r.also) for r in SETS[args.set])
    print(
        f"requests with parts planned: {planned}; of {several} of several needs, "
        f"every need's operation planned: {covered}"
    )
    for name, (right, count) in halves.items():
        print(f"{name}: expected first {right / count:.3f} of {count}")


if __name__ == "__main__":
    main()
