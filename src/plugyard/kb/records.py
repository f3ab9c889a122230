"""What each Shu ingestion call stores: a source id, a title, the text to index, the
content to hash and the extraction metadata — built from the call's own fields."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugyard.kb.errors import KnowledgeError
from plugyard.kb.formats import html_text

MAX_ID = 500


@dataclass(frozen=True, slots=True)
class Record:
    kind: str
    source_id: str
    title: str
    text: str
    content_hash: str
    source_url: str | None
    attributes: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)


def digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode("utf-8")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def check_id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID:
        raise KnowledgeError(
            f"{name} must be 1 to {MAX_ID} characters", code="invalid_request", field=name
        )
    return value


def attributes_of(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if attributes is None:
        return {}
    if not isinstance(attributes, Mapping):
        raise KnowledgeError("attributes must be a mapping", code="invalid_request")
    return {str(k): v for k, v in attributes.items()}


def text_record(
    kind: str,
    source_id: Any,
    title: Any,
    content: Any,
    source_url: str | None,
    attributes: Mapping[str, Any] | None,
    **details: Any,
) -> Record:
    if not isinstance(content, str):
        raise KnowledgeError("content must be text", code="invalid_request", field="content")
    attrs = attributes_of(attributes)
    name = str(title) if title is not None else ""
    url = source_url or _str(attrs.get("source_url"))
    source = check_id(source_id, "source_id")
    body = content.strip()
    return Record(kind, source, name, body, digest(kind, name, body), url, attrs, details)


def email_record(
    *,
    subject: Any,
    sender: Any,
    recipients: Any,
    date: Any,
    message_id: Any,
    thread_id: Any,
    body_text: Any,
    body_html: Any,
    labels: Any,
    source_url: str | None,
    attributes: Mapping[str, Any] | None,
    max_nodes: int | None = None,
) -> Record:
    attrs = attributes_of(attributes)
    message = check_id(message_id, "message_id")
    source = check_id(attrs.get("external_id") or message, "attributes.external_id")
    people = recipients if isinstance(recipients, Mapping) else {"to": recipients}
    body = body_text if isinstance(body_text, str) and body_text.strip() else None
    if body is None and isinstance(body_html, str):
        body = html_text(body_html, max_nodes)[0]
    head = [f"Subject: {subject or ''}"]
    if sender:
        head.append(f"From: {sender}")
    for key in ("to", "cc", "bcc"):
        found = _addresses(people.get(key))
        if found:
            head.append(f"{key.capitalize()}: {', '.join(found)}")
    if date:
        head.append(f"Date: {date}")
    label_list = (
        [str(x) for x in labels]
        if isinstance(labels, Sequence) and not isinstance(labels, str)
        else []
    )
    if label_list:
        head.append(f"Labels: {', '.join(label_list)}")
    text = "\n".join(head) + "\n\n" + (body or "").strip()
    details = {"message_id": message, "thread_id": thread_id, "labels": label_list}
    url = source_url or _str(attrs.get("source_url"))
    title = str(subject) if subject else "(no subject)"
    return Record(
        "email", source, title, text.strip(), digest("email", text, label_list), url, attrs, details
    )


def _addresses(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    return [str(value)]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
