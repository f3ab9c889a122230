"""The seed systems' own plugins under plugyard, from fetched checkouts (a lab, not CI).

    PYTHONPATH=src:bench python bench/seedplugins.py --mrp DIR \\
        --olo-config DIR --olo-config WORKER_DIR --olo-plugins DIR \\
        [--homeclaw DIR] [--shu DIR] [--json]

Each system's lab is a module of ``bench/seed_labs`` with ``run(checkout) -> dict``
(``{"system", "counts", "failures", …}``); a system whose checkout is not given, or
whose module is not there, is left out of the table with a note. Findings:
bench/labs/SEED_PLUGINS_LAB.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _lab(name: str) -> Any | None:
    try:
        return importlib.import_module(f"seed_labs.{name}")
    except ModuleNotFoundError as exc:
        if exc.name not in {f"seed_labs.{name}", "seed_labs"}:
            raise
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--homeclaw", type=Path)
    parser.add_argument("--shu", type=Path)
    parser.add_argument("--mrp", type=Path)
    parser.add_argument(
        "--olo-config",
        type=Path,
        action="append",
        default=[],
        help="OLO's Configuration checkout (again for the Worker's: its config/)",
    )
    parser.add_argument("--olo-plugins", type=Path)
    parser.add_argument("--json", action="store_true", help="Print every report as JSON.")
    args = parser.parse_args(argv)
    plans: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = []
    if args.homeclaw:
        plans.append(("HomeClaw", "homeclaw", (args.homeclaw,), {}))
    if args.shu:
        plans.append(("Shu", "shu", (args.shu,), {}))
    if args.mrp:
        plans.append(("MRP-VM", "mrp", (args.mrp,), {}))
    if args.olo_config:
        first, *more = args.olo_config
        plans.append(("OLO", "olo", (first,), {"plugins": args.olo_plugins, "more": more}))
    reports = []
    for system, module, positional, options in plans:
        lab = _lab(module)
        if lab is None:
            print(f"{system}: no lab module seed_labs/{module}.py here; left out", file=sys.stderr)
            continue
        reports.append(lab.run(*positional, **options))
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False, default=str))
        return 0
    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'system':<10} {'count':<44} {'value':>6}")
    for report in reports:
        for name, value in report["counts"].items():
            print(f"{report['system']:<10} {name:<44} {value:>6}")
    for report in reports:
        if report.get("failures"):
            print(f"\n{report['system']} failures:")
            for line in report["failures"]:
                print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
