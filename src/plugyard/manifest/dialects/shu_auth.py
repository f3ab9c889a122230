"""The governance blocks of a Shu manifest: ``op_auth`` and ``required_identities``.

Read into plain dicts the canonical model validates (so its faults carry source
pointers), and written back with only non-default fields. Keys real Shu plugins use but
the contract does not name (``allowed_modes`` on an op, ``description`` on a secret) are
kept in ``x`` silently; any other unknown key is kept with an ``unknown_field`` warning.
"""

from __future__ import annotations

from typing import Any

from plugyard.manifest.model import IdentityRequirement, OpAuth
from plugyard.manifest.pointer import pointer_join, resolve, split
from plugyard.manifest.reading import ReadContext

OP_AUTH_KEYS = ("provider", "mode", "scopes", "subject_hint", "secrets")
SECRET_KEYS = ("allowed_scope",)
IDENTITY_KEYS = ("provider", "mode", "scopes", "optional")
#: Known to real Shu plugins and its UI, but with no canonical home: kept in ``x``.
_OP_AUTH_KEPT = ("allowed_modes",)
_SECRET_KEPT = ("description",)


def _keep(ctx: ReadContext, data: dict[str, Any], keys: tuple[str, ...], pointer: str) -> None:
    for key in keys:
        if key in data:
            ctx.keep(pointer_join(pointer, key), data[key])


def _present(item: dict[str, Any]) -> dict[str, Any]:
    # Absent and null are the same to Shu; dropping them lets the model apply defaults.
    return {key: value for key, value in item.items() if value is not None}


def read_op_auth(value: Any, ctx: ReadContext) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for op, raw in (ctx.mapping(value, "/op_auth") or {}).items():
        here = pointer_join("/op_auth", op)
        entry = ctx.mapping(raw, here)
        if entry is None:
            continue
        ctx.unknown(entry, OP_AUTH_KEYS + _OP_AUTH_KEPT, here)
        _keep(ctx, entry, _OP_AUTH_KEPT, here)
        ctx.strings(entry.get("allowed_modes"), pointer_join(here, "allowed_modes"))
        secrets: dict[str, Any] = {}
        for key, spec in (ctx.mapping(entry.get("secrets"), f"{here}/secrets") or {}).items():
            where = pointer_join(here, "secrets", key)
            body = ctx.mapping(spec, where) or {}
            ctx.unknown(body, SECRET_KEYS + _SECRET_KEPT, where)
            _keep(ctx, body, _SECRET_KEPT, where)
            scope = ctx.text(body.get("allowed_scope"), f"{where}/allowed_scope")
            secrets[key] = _present({"allowed_scope": scope})
        out[op] = _present(
            {
                "provider": ctx.text(entry.get("provider"), f"{here}/provider"),
                "mode": ctx.text(entry.get("mode"), f"{here}/mode"),
                "scopes": ctx.strings(entry.get("scopes"), f"{here}/scopes"),
                "subject_hint": ctx.text(entry.get("subject_hint"), f"{here}/subject_hint"),
                "secrets": secrets,
            }
        )
    return out


def read_identities(value: Any, ctx: ReadContext) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, raw in enumerate(ctx.items(value, "/required_identities")):
        here = pointer_join("/required_identities", index)
        item = ctx.mapping(raw, here)
        if item is None:
            continue
        ctx.unknown(item, IDENTITY_KEYS, here)
        out.append(
            _present(
                {
                    "provider": ctx.text(item.get("provider"), f"{here}/provider"),
                    "mode": ctx.text(item.get("mode"), f"{here}/mode"),
                    "scopes": ctx.strings(item.get("scopes"), f"{here}/scopes"),
                    "optional": ctx.boolean(item.get("optional"), f"{here}/optional"),
                }
            )
        )
    return out


def write_op_auth(op_auth: dict[str, OpAuth]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op, auth in op_auth.items():
        entry = auth.model_dump(mode="json", exclude_defaults=True)
        if auth.secrets:
            # An all-default secret still has to be named: it is the requirement itself.
            entry["secrets"] = {
                key: spec.model_dump(mode="json", exclude_defaults=True)
                for key, spec in auth.secrets.items()
            }
        out[op] = entry
    return out


def write_identities(identities: tuple[IdentityRequirement, ...]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json", exclude_defaults=True) for item in identities]


def nested_home(document: dict[str, Any], pointer: str) -> bool:
    """Whether an ``x`` entry below ``op_auth`` or ``required_identities`` can go back
    where this module's reader found it: into a mapping the writer made, under a key
    that mapping does not already hold and that the reader would not read as canonical."""
    tokens = split(pointer)
    if tokens[0] == "op_auth" and len(tokens) == 3:
        known: tuple[str, ...] = OP_AUTH_KEYS
    elif tokens[0] == "op_auth" and len(tokens) == 5 and tokens[2] == "secrets":
        known = SECRET_KEYS
    elif tokens[0] == "required_identities" and len(tokens) == 3:
        known = IDENTITY_KEYS
    else:
        return False
    try:
        parent = resolve(document, pointer_join("", *tokens[:-1]))
    except KeyError:
        return False
    return isinstance(parent, dict) and tokens[-1] not in parent and tokens[-1] not in known
