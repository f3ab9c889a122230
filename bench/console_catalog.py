"""The console's catalog page over a registry of 10,000 plugins: server time of its first
page, for an admin and for a subject whose policy grants are checked plugin by plugin.

    bash scripts/bench.sh console_catalog            # prints a table
    bash scripts/bench.sh console_catalog --json     # the same as JSON

The plugins spread over the OLO capabilities (some under two, some ``ALL``, some
*Undefined*), a few in each control role. Each request goes through the whole app —
session lookup, key check, rights, grouping, rendering — in process (Starlette's test
client), so the figure is the server's time plus a client's in-process hop. The "cold"
rows make a real change before each request (outside the timing): one more plugin
registered (the kept groupings are dropped, the layout is patched); a new policy that
changes every subject's grants (the groupings and the viewer's rights over every plugin
are done again); or a new policy that changes another role's grants only.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from plugyard.manifest.model import NoRuntime, Operation, Placement, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

PLUGINS = 10_000
ROUNDS = 15
CAPABILITIES = ("ACCESS", "MEMORY", "RETRIEVAL", "MODEL", "CACHING", "TOOL")
ROLES = ("CONDITION", "ITERATOR", "FORK", "JOIN")
POLICY = """
grants:
  - {to: "role:admin", plugin: "*", operation: "*", verb: "*", effect: allow}
  - {to: "role:analyst", plugin: "bench-*", effect: allow}
"""


def again(n: int, to: str) -> str:
    """POLICY as a new document (a new version) that grants the same, with one more
    deny for ``to``: everyone's (``*``) grants change, or another role's only."""
    return POLICY + f'  - {{to: "{to}", plugin: "none-{n}", effect: deny}}\n'


def plugin(index: int) -> RegisteredPlugin:
    if index % 50 == 0:
        placement = Placement(role=ROLES[(index // 50) % len(ROLES)])
    elif index % 17 == 0:
        placement = Placement(capabilities=("ALL",))
    elif index % 13 == 0:
        placement = Placement()
    else:
        first = CAPABILITIES[index % len(CAPABILITIES)]
        second = CAPABILITIES[(index // 7) % len(CAPABILITIES)]
        placement = Placement(capabilities=tuple(dict.fromkeys((first, second))))
    descriptor = PluginDescriptor(
        id=f"bench-{index:05d}",
        name=f"Bench plugin {index}",
        description=f"Synthetic plugin number {index} for the catalog benchmark.",
        operations=(Operation(id="run", description="Does nothing."),),
        placement=placement,
        runtime=NoRuntime(reason="benchmark"),
    )
    return RegisteredPlugin.of(descriptor, "catalog")


def login(client: TestClient, key: str) -> None:
    page = client.get("/console/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    reply = client.post("/console/login", data={"csrf_token": token.group(1), "key": key},
                        follow_redirects=False)  # fmt: skip
    assert reply.status_code == 303, reply.text


def median_ms(client: TestClient, url: str, cold: Callable[[], None] | None) -> tuple[float, int]:
    size = len(client.get(url).content)  # warm: templates compiled, caches filled
    times = []
    for _ in range(ROUNDS):
        if cold is not None:
            cold()
        started = time.perf_counter()
        reply = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert reply.status_code == 200
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database=str(Path(folder) / "bench.db"), builtins=False,
                            embedder="hashing")  # fmt: skip
        with Yard.from_settings(settings) as yard:
            yard.registry.register_many([plugin(i) for i in range(PLUGINS)])
            admin_key = yard.keys.bootstrap_admin()
            assert admin_key is not None
            yard.admin.load_policy(POLICY, by="admin")
            analyst_key = yard.keys.create("analyst", ("analyst",))[1]
            app = create_app(yard, ServerSettings(health_checks=False))
            added = iter(range(PLUGINS, PLUGINS * 2))
            loads = iter(range(10**6))

            def register() -> None:
                yard.registry.register(plugin(next(added)))

            def load_policy() -> None:
                yard.admin.load_policy(again(next(loads), "*"), by="admin")

            def load_others_policy() -> None:
                yard.admin.load_policy(again(next(loads), "role:nobody"), by="admin")

            rows = []
            for who, key in (("admin", admin_key), ("analyst (policy grants)", analyst_key)):
                with TestClient(app, base_url="https://testserver") as client:
                    login(client, key)
                    for label, url, cold in (
                        ("first page, all sections, cold: after a registration", "/", register),
                        ("first page, all sections, cold: after a policy load", "/", load_policy),
                        (
                            "first page, all sections, cold: after a policy load for another role",
                            "/",
                            load_others_policy,
                        ),
                        ("first page, all sections", "/", None),
                        ("one section, page 2", "/?section=MODEL&page=2", None),
                    ):
                        ms, size = median_ms(client, url, cold)
                        rows.append({"subject": who, "page": label, "median_ms": round(ms, 1),
                                     "bytes": size})  # fmt: skip
    if args.json:
        json.dump({"plugins": PLUGINS, "rows": rows}, sys.stdout, indent=2)
        print()
        return
    print(f"Catalog page over {PLUGINS:,} plugins, median of {ROUNDS} requests")
    print("| subject | page | median ms | HTML bytes |")
    print("|---|---|---:|---:|")
    for row in rows:
        print(f"| {row['subject']} | {row['page']} | {row['median_ms']} | {row['bytes']:,} |")


if __name__ == "__main__":
    main()
