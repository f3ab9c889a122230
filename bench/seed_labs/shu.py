"""Shu's own plugins, from a checkout of its repository, run under plugyard unchanged.

``run(checkout)`` copies ``<checkout>/plugins`` (the plugins Shu ships) to a scratch
folder, opens a yard over it (SQLite, governed, no built-ins) and makes the calls of
:data:`CALLS` as a signed-in user with a vouched e-mail identity. Each call has an
expectation:

- ``ok``: needs no outside account — it must succeed;
- ``account``: needs a Google or Microsoft sign-in this lab does not have — it must be
  refused (``identity_required`` or a refused token, never a success);
- ``secret``: reads a secret nobody set — refused or answered "not found";
- ``broken``: broken on purpose (an import of Shu's own modules, an undeclared
  capability), or by its own data (an answer that breaks its own output schema, which
  Shu's executor refuses too) — it must be refused.

A call is *right* when it meets an ``ok`` expectation, *refused correctly* when it
meets another, and *failed* (with the reason) otherwise. Not run in CI: it needs the
checkout. ``python -m bench.seed_labs.shu CHECKOUT`` prints the table.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

BOUND = {"kb": {"knowledge_base_ids": ["lab"]}}
#: (plugin id, parameters, expectation). Demo plugins answer from synthesized data.
CALLS: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("test_echo", {"op": "run", "message": "hi"}, "ok"),
    ("test_schema", {"op": "run", "q": "hello"}, "ok"),
    ("test_slow", {"op": "run", "sleep_seconds": 0.1}, "ok"),
    ("test_output_bloat", {"op": "run", "size": 2048}, "ok"),
    ("test_capdeny", {"op": "try_secrets"}, "broken"),
    ("test_hostcaps", {"op": "get_identity"}, "ok"),
    ("test_hostcaps", {"op": "storage_put", "key": "k1", "value": {"n": 1}}, "ok"),
    ("test_hostcaps", {"op": "storage_get", "key": "k1"}, "ok"),
    ("test_hostcaps", {"op": "cache_set", "key": "c1", "value": "v", "ttl": 60}, "ok"),
    ("test_hostcaps", {"op": "cache_get", "key": "c1"}, "ok"),
    ("test_kowrite", {"op": "run", "kb_id": "lab", "type": "note", "external_id": "n-1",
                      "title": "Lab note", "content": "The lab note is about otters."}, "ok"),
    # Shu binds the knowledge bases a search reads through the host context.
    ("kb_search", {"op": "search_chunks", "field": "content", "operator": "icontains",
                   "value": "otters", "__host": BOUND}, "ok"),
    ("kb_search", {"op": "search_documents", "field": "title", "operator": "icontains",
                   "value": "lab", "__host": BOUND}, "ok"),
    ("demo_car_service", {"op": "check_availability"}, "ok"),
    ("demo_facial_recognition", {"op": "get_event", "event_id": "DXB-20260121-193000-001"},
     "ok"),
    # Its answer breaks its own output schema (no self_exclusion): Shu refuses it too.
    ("demo_incident_history", {"op": "get_by_player", "customer_id": "CUST-5678"}, "broken"),
    ("demo_player_profiles", {"op": "list"}, "ok"),
    ("demo_purchase_history", {"op": "get", "player_id": "PLAYER-7777"}, "ok"),
    ("demo_spa_service", {"op": "check_availability"}, "ok"),
    ("demo_restaurant_management", {"op": "list_available"}, "ok"),
    ("demo_tailor_hold", {"op": "check_availability"}, "ok"),
    ("shu_secret_test", {"op": "validate_api_key"}, "secret"),
    ("shu_secret_test", {"op": "validate_user_token"}, "secret"),
    ("shu_secret_test", {"op": "validate_system_credential"}, "secret"),
    ("calendar_events", {"op": "list"}, "account"),
    ("gchat_digest", {"op": "list"}, "account"),
    ("gdrive_files", {"op": "list"}, "account"),
    ("gmail_digest", {"op": "list"}, "account"),
    ("outlook_calendar", {"op": "list"}, "account"),
    ("outlook_mail", {"op": "list"}, "account"),
    ("teams_chat", {"op": "list"}, "account"),
    ("bad_import", {"op": "run"}, "broken"),
    ("runtime_bad_import", {"op": "run"}, "broken"),
)  # fmt: skip
SUBJECT = "lab-user"
IDENTITIES = {"email": "lab-user@example.com"}


def run(checkout: Path) -> dict[str, Any]:
    """Run :data:`CALLS` against ``checkout``'s plugins; the counts and each call."""
    from plugyard.yard import Settings, Yard

    scratch = Path(tempfile.mkdtemp(prefix="shu-lab-"))
    try:
        folders = []
        for folder in sorted((Path(checkout) / "plugins").iterdir()):
            if folder.is_dir():
                shutil.copytree(folder, scratch / "plugins" / folder.name)
                folders.append(scratch / "plugins" / folder.name)
        settings = Settings(
            database=str(scratch / "lab.db"),
            builtins=False,
            plugin_dirs=tuple(folders),
            embedder="hashing",
            packages_dir=scratch / "packages",
        )
        with Yard.from_settings(settings) as yard:
            # The operator's step Shu's admin does by binding a knowledge base: the one
            # test_kowrite writes is shared with kb_search.
            yard.knowledge.create("lab", "test_kowrite", readers=("kb_search",))
            rows = [_call(yard, *call) for call in CALLS]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _counts(rows)


def _call(yard: Any, plugin: str, params: dict[str, Any], expect: str) -> dict[str, Any]:
    from plugyard.execution.executor import CallRequest, new_request_id
    from plugyard.runtimes.base import CallContext

    context = CallContext(
        request_id=new_request_id(), subject=SUBJECT, roles=("admin",), identities=IDENTITIES
    )
    request = CallRequest(plugin, None, params, context, timeout_ms=20_000)
    result = asyncio.run(yard.executor.call(request))
    error = result.error
    data = result.data if isinstance(result.data, dict) else {}
    succeeded = result.status == "success" and not _reports_failure(data, expect)
    if expect == "ok":
        verdict = "right" if succeeded else "failed"
    else:
        verdict = "refused_correctly" if not succeeded else "failed"
    reason = f"{error.code}: {error.message}" if error else _summary(data)
    op = params.get("op")
    return {"call": f"{plugin}.{op}", "expect": expect, "verdict": verdict, "reason": reason}


def _reports_failure(data: dict[str, Any], expect: str) -> bool:
    """A secret test that answers "not found" has not read a secret."""
    return expect == "secret" and data.get("secret_source") == "not_found"


def _summary(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 160 else text[:157] + "..."


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    verdicts = [row["verdict"] for row in rows]
    return {
        "calls": len(rows),
        "right": verdicts.count("right"),
        "refused_correctly": verdicts.count("refused_correctly"),
        "failed": verdicts.count("failed"),
        "expected_ok": sum(1 for row in rows if row["expect"] == "ok"),
        "rows": rows,
    }


def main(argv: list[str]) -> None:
    counts = run(Path(argv[0]))
    for row in counts["rows"]:
        print(f"{row['verdict']:<18} {row['expect']:<8} {row['call']:<40} {row['reason']}")
    print(
        f"calls {counts['calls']}  right {counts['right']} of {counts['expected_ok']}  "
        f"refused correctly {counts['refused_correctly']}  failed {counts['failed']}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
