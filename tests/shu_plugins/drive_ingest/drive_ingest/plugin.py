"""Drive ingestion as the seed shows it: host.kb.ingest_document with the file's bytes."""

import base64


class Plugin:
    def get_schema(self):
        return {
            "type": "object",
            "properties": {
                "kb_id": {"type": "string"},
                "files": {"type": "array", "items": {"type": "object"}},
                "search": {"type": "string"},
            },
            "additionalProperties": False,
        }

    async def execute(self, params, context, host):
        kb_id = params.get("kb_id", "drive")
        out, skips = [], []
        for item in params.get("files", []):
            blob = base64.b64decode(item["data"])
            try:
                out.append(
                    await host.kb.ingest_document(
                        kb_id,
                        file_bytes=blob,
                        filename=item["name"],
                        mime_type=item.get("mime"),
                        source_id=item["id"],
                        source_url=item.get("link"),
                    )
                )
            except Exception as exc:  # a skip, as Shu's ingestion plugins report them
                skips.append({"id": item["id"], "reason": getattr(exc, "code", "other")})
        found = None
        if params.get("search"):
            found = await host.query.search(kb_id, params["search"], k=3)
        return {"status": "success", "data": {"ingested": out, "found": found}, "skips": skips}
