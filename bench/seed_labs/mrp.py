"""MRP-VM lab: the typed plugins of an MRP-VM checkout (``src/plugins/<type>/<id>/``,
``plugin.json`` + ``index.mjs``), registered by plugyard as they are and called through
its executor in the Node host, twice: natively (no model: the call's context offers no
bridge) and with the model bridge — plugyard's chat model, counted per call: the yard's
embedded model, and a scripted loopback model (plugyard's OpenAI-compatible test
server) that answers each prompt in the form MRP-VM's parsers require, so the bridge
path is measured apart from what a small local model can write.

Each plugin gets its family's method with the input members MRP-VM's engine hands it
(:func:`plugyard.manifest.dialects.mrp_inputs.mrp_members` over a DS003 payload, as the
reasoning loop passes them). A plugin *runs* when the call answers ``success``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.llm.testing import FakeModelServer, Reply
from plugyard.manifest.dialects.mrp_inputs import mrp_members
from plugyard.reasoning.bridge import ModelBridge
from plugyard.runtimes.base import CallContext
from plugyard.store.keys import ADMIN_ROLE
from plugyard.yard import Settings, Yard

PROMPT = "Is a square a rectangle? Answer yes or no and say why."
UNITS = [
    {"title": "u1", "sourceLink": "geometry.md", "text": "A rectangle has four right angles."},
    {
        "title": "u2",
        "sourceLink": "geometry.md",
        "text": "A square has four equal sides and four right angles.",
    },
]
#: family → (operation, extra input members the stage carries in MRP-VM's engine)
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "sd": ("detect_seeds", {}),
    "kb": ("retrieve", {}),
    "gs": ("solve", {}),
    "val": ("validate", {"responseMarkdown": "Yes: a square has four right angles."}),
    "plan": ("build_plan", {"phase": "post-seed"}),
}


def payload(family: str) -> dict[str, Any]:
    intents = [{"id": "i1", "act": "verify", "text": PROMPT}]
    _, extra = CALLS[family]
    return mrp_members({"prompt": PROMPT, "context": UNITS, "intents": intents, **extra})


async def _call(yard: Yard, plugin_id: str, family: str, bridged: bool) -> tuple[str, str]:
    plugin = yard.registry.find(plugin_id)
    assert plugin is not None
    callbacks: dict[str, Any] = {}
    if bridged:
        roles = plugin.descriptor.model_roles
        callbacks["llm"] = ModelBridge(lambda: yard.llm, 4, roles)
    context = CallContext(request_id=new_request_id(), roles=(ADMIN_ROLE,), callbacks=callbacks)
    operation, _ = CALLS[family]
    request = CallRequest(plugin_id, operation, payload(family), context, 300_000)
    result = await yard.executor.call(request)
    data = result.data if isinstance(result.data, dict) else {}
    if result.status == "success" and not data.get("error"):
        return "runs", f"status {data.get('status', '-')}"
    if result.status == "success":  # the plugin answered, reporting its own failure
        return "fails", f"status {data.get('status')}: {data['error']}"
    error = result.error
    return "fails", f"{error.code}: {error.message[:300]}" if error else result.status


def _scripted(seeds: dict[str, Any]) -> Any:
    """A loopback model answering each MRP-VM prompt in the form its parser requires:
    the seed bundle sections (with the symbolic detector's own CNL for the prompt), the
    validator's JSON verdict, grounded Markdown for a goal solver."""

    def reply(body: dict[str, Any]) -> Reply:
        system = " ".join(
            str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system"
        ).lower()
        if "intent cnl" in system:
            text = (
                f"# Intent CNL\n{seeds.get('intentCNL', '')}\n"
                f"# Session Context CNL\n{seeds.get('currentTurnContextCNL', '')}"
            )
            return Reply.text(text)
        if "verdict" in system:
            return Reply.text(json.dumps({"verdict": "accepted", "reason": "grounded"}))
        return Reply.text("## Intent Group 1\n### Answer\nYes: a square has four right angles.")

    return reply


async def _pass(checkout: Path, llm: str | None, bridged: bool, rows: dict[str, list[str]],
                failures: list[str], label: str, allow: tuple[str, ...] = ()) -> None:  # fmt: skip
    settings = Settings(
        database=":memory:",
        builtins=False,
        plugin_dirs=(checkout / "src" / "plugins",),
        governed=False,
        llm=llm,
        outbound_allow=allow,
    )
    with Yard.from_settings(settings) as yard:
        for plugin_id in sorted(rows):
            plugin = yard.registry.find(plugin_id)
            if plugin is None or not plugin.available:
                rows[plugin_id].append("fails")
                continue
            outcome, why = await _call(yard, plugin_id, plugin.descriptor.family or "?", bridged)
            rows[plugin_id].append(outcome)
            if outcome != "runs":
                failures.append(f"{plugin_id} {label}: {why}")
        await yard.runtimes["subprocess"].aclose()  # its workers belong to this loop


def run(checkout: Path) -> dict[str, Any]:
    plugins_dir = checkout / "src" / "plugins"
    folders = sorted(p.parent for p in plugins_dir.glob("*/*/index.mjs"))
    failures: list[str] = []
    started = time.perf_counter()
    settings = Settings(
        database=":memory:", builtins=False, plugin_dirs=(plugins_dir,), governed=False
    )
    rows: dict[str, list[str]] = {}
    with Yard.from_settings(settings) as yard:
        for folder in folders:
            plugin = yard.registry.find(folder.name)
            family = plugin.descriptor.family if plugin is not None else None
            rows[folder.name] = [family or "-"]
            if plugin is None or not plugin.available:
                why = plugin.unavailable_reason if plugin else "not registered"
                failures.append(f"{folder.name}: {why}")
        seeds = asyncio.run(_seeds(yard))
    asyncio.run(_pass(checkout, None, False, rows, failures, "natively"))
    asyncio.run(_pass(checkout, None, True, rows, failures, "with the embedded model"))

    async def scripted() -> None:
        async with FakeModelServer(_scripted(seeds), model="scripted") as fake:
            llm = f"openai:{fake.base_url}:scripted"
            allow = (f"127.0.0.1:{fake.port}",)
            await _pass(checkout, llm, True, rows, failures, "with a scripted model", allow)

    asyncio.run(scripted())
    column = {1: "run natively", 2: "run with the bridge (embedded model)",
              3: "run with the bridge (scripted model)"}  # fmt: skip
    counts: dict[str, int] = {
        "typed plugins (plugin.json + index.mjs)": len(folders),
        "registered and loading": sum(
            1 for f in folders if f"{f.name}: " not in " ".join(failures)
        ),
    }
    for index, name in column.items():
        counts[name] = sum(1 for row in rows.values() if len(row) > index and row[index] == "runs")
    return {
        "system": "MRP-VM",
        "counts": counts,
        "rows": [(plugin_id, *row) for plugin_id, row in rows.items()],
        "failures": failures,
        "seconds": round(time.perf_counter() - started, 1),
    }


async def _seeds(yard: Yard) -> dict[str, Any]:
    """What the symbolic seed detector makes of the prompt (the scripted model's bundle)."""
    if yard.registry.find("sd-symbolic") is None:
        return {}
    context = CallContext(request_id=new_request_id(), roles=(ADMIN_ROLE,))
    request = CallRequest("sd-symbolic", "detect_seeds", payload("sd"), context, 60_000)
    result = await yard.executor.call(request)
    return dict(result.data) if isinstance(result.data, dict) else {}
