"""An MRP-VM kb-plugin wrapper (DS016): newline JSON on stdin and stdout."""

import json
import sys

GLOSSARY = {"tort": "A tort is a civil wrong that causes harm, for which courts award damages."}

for line in sys.stdin:
    request = json.loads(line)
    if request.get("method") != "execute":
        reply = {"id": request.get("id"), "error": {"code": "invalid_request", "message": "no"}}
        print(json.dumps(reply), flush=True)
        continue
    params = request["params"]
    operation, given, context = params["operation"], params["parameters"], params["context"]
    if operation == "retrieve":
        words = given.get("prompt", "").lower()
        units = [
            {"title": k, "sourceLink": f"glossary#{k}", "text": v}
            for k, v in GLOSSARY.items()
            if k in words
        ]
        seen = {
            k: context.get(k)
            for k in (
                "requestId",
                "conversation",
                "modelSettings",
                "parser",
                "decomposer",
                "llm",
                "logger",
            )
        }
        data = {
            "status": "success" if units else "insufficient",
            "resolvedIntents": [{"units": units, "context": []}] if units else None,
            "sufficient": bool(units),
            "retrievalTrace": {
                "purpose": "task-evidence",
                "kuLevelsUsed": ["leaf"],
                "totalKUsConsidered": len(GLOSSARY),
                "selectedKUCount": len(units),
                "seen": seen,
            },
            "error": None,
        }
    else:  # the hooks: nothing to keep
        data = {"status": "skipped", "artifacts": [], "error": None}
    print(json.dumps({"id": request["id"], "result": {"data": data}}), flush=True)
