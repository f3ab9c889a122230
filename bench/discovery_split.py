"""Split a query set by query for ``bench/discovery.py --feedback``: a share of the
queries (single- and multi-tool) goes into one file to teach discovery; the benchmark
then evaluates only the rest. The split is by a hash of the query text, so it is the
same on every run and every machine.

    python bench/discovery_split.py --data ../shared/bench/metatool --share 0.5 --out FEED
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path


def taught(query: str, share: float) -> bool:
    h = int.from_bytes(hashlib.sha256(f"plugyard-feed:{query}".encode()).digest()[:8], "big")
    return h / 2**64 < share


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    kept = 0
    with Path(args.out).open("w", encoding="utf-8") as out:
        for name in ("queries.jsonl", "queries_multi.jsonl"):
            path = Path(args.data) / name
            if not path.exists():
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip() and taught(json.loads(line)["query"], args.share):
                    out.write(line.rstrip() + "\n")
                    kept += 1
    print(f"{kept} queries written to {args.out}")


if __name__ == "__main__":
    main()
