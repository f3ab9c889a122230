"""Answers markup in its data, its citations and its skips."""

PAYLOAD = '<script>window.__pwned = 6</script><img src=x onerror="window.__pwned = 7">'


def emit(**params):
    return {
        "status": "success",
        "data": {"html": PAYLOAD, "echo": params},
        "citations": [
            {"type": "web", "ref": "javascript:window.__pwned = 8", "label": PAYLOAD},
            {"type": "web", "ref": "https://example.org/doc", "label": "A real source"},
        ],
        "skips": [{"id": "1", "name": PAYLOAD, "reason": "other", "details": {"why": PAYLOAD}}],
    }
