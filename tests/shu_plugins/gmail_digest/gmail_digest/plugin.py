"""The seed's gmail_digest: ingests the messages it is given into its knowledge base as
the account host.auth resolves, and digests them; one op parameter, Shu-style."""


class Plugin:
    def get_schema(self):
        return {
            "type": "object",
            "properties": {
                "op": {"type": "string", "enum": ["digest", "send"]},
                "messages": {"type": "array", "items": {"type": "object"}},
                "kb_id": {"type": "string"},
            },
            "required": ["op"],
        }

    def get_output_schema(self):
        return {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "account": {"type": "string"}},
            "required": ["count"],
        }

    async def execute(self, params, context, host):
        _token, target = await host.auth.resolve_token_and_target("google")
        marks = dict(context.get("session", {}).get("watermarks") or {})
        count = 0
        last = marks.get("inbox")
        for message in params.get("messages", []):
            if last is not None and message["id"] <= last:
                continue
            await host.kb.ingest_email(
                params.get("kb_id", "mail"),
                subject=message["subject"],
                sender=message.get("from"),
                recipients={"to": [target]},
                date=message.get("date"),
                message_id=message["id"],
                thread_id=message.get("thread"),
                body_text=message.get("body"),
                labels=["INBOX"],
            )
            count += 1
            last = message["id"]
        return {
            "status": "success",
            "data": {"count": count, "account": target, "watermarks": {"inbox": last}},
            "next_cursor": last,
        }
