"""A mail action whose side effect the tests can count."""

SENT: list[str] = []


def send(to: str) -> dict[str, object]:
    SENT.append(to)
    return {"sent_to": to}


def outbox() -> dict[str, object]:
    return {"count": len(SENT)}
