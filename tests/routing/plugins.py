"""Test plugins for the routing flow: readers whose output may carry injected
instructions, and writers whose every run is recorded as a side effect."""

from __future__ import annotations

from typing import Any

from plugyard.runtimes.python import tool

#: (plugin, operation, arguments) of every write or destructive run.
SIDE_EFFECTS: list[tuple[str, str, dict[str, Any]]] = []
#: What r-notes returns for a topic (a test sets it), and the topics it was asked.
NOTES: dict[str, str] = {}
FETCHED: list[str] = []


@tool(id="r-notes", operation="fetch", inline=True)
def fetch(topic: str) -> dict[str, Any]:
    """Reads the user's notes on a topic."""
    FETCHED.append(topic)
    return {"topic": topic, "text": NOTES.get(topic, f"nothing on {topic}")}


@tool(id="r-summary", operation="read", inline=True, post_process=True,
      post_process_prompt="Summarise the report in one sentence.")  # fmt: skip
def read(name: str) -> dict[str, Any]:
    """Reads a long report by name (the answer is a summary of it)."""
    return {"name": name, "report": NOTES.get(name, "all quiet")}


@tool(id="r-big", operation="dump", inline=True)
def dump(megabytes: int = 2) -> str:
    """Dumps a log of several megabytes."""
    return "x" * (megabytes * 1024 * 1024)


@tool(id="r-wallet", operation="transfer", inline=True, effect="write", requires_approval=True)
def transfer(amount: int, to: str) -> dict[str, Any]:
    """Transfers money from the user's wallet."""
    SIDE_EFFECTS.append(("r-wallet", "transfer", {"amount": amount, "to": to}))
    return {"sent": amount}


@tool(id="r-mailer", operation="send", inline=True, effect="write", requires_approval=True)
def send(to: str, body: str) -> dict[str, Any]:
    """Sends an email."""
    SIDE_EFFECTS.append(("r-mailer", "send", {"to": to, "body": body}))
    return {"sent": True}


@tool(id="r-files", operation="delete_all", inline=True, effect="destructive",
      requires_approval=True)  # fmt: skip
def delete_all(path: str) -> dict[str, Any]:
    """Deletes every file under a path."""
    SIDE_EFFECTS.append(("r-files", "delete_all", {"path": path}))
    return {"deleted": path}


@tool(id="r-wipe", operation="wipe", inline=True, effect="destructive")
def wipe(disk: str) -> dict[str, Any]:
    """Wipes a disk (no approval: only rights keep a caller from it)."""
    SIDE_EFFECTS.append(("r-wipe", "wipe", {"disk": disk}))
    return {"wiped": disk}


@tool(
    id="r-ref",
    operation="lookup",
    inline=True,
    parameters={
        "type": "object",
        "properties": {"code": {"$ref": "#/$defs/code"}},
        "required": ["code"],
        "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
    },
)
def lookup(code: str) -> dict[str, Any]:
    """Looks up a currency by its three-letter code."""
    return {"code": code, "name": {"EUR": "euro", "NOK": "krone"}.get(code, "unknown")}


ALL = (fetch, read, dump, transfer, send, delete_all, wipe, lookup)
WRITERS = {("r-wallet", "transfer"), ("r-mailer", "send"), ("r-files", "delete_all"),
           ("r-wipe", "wipe")}  # fmt: skip
