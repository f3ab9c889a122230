import json
import sys

for line in sys.stdin:  # one request per line; exit when stdin closes
    req = json.loads(line)
    if req["method"] == "execute":
        prompt = req["params"]["parameters"]["prompt"]
        answer = {"status": "success", "responseMarkdown": prompt.upper()}
        reply = {"id": req["id"], "result": {"data": answer}}
    else:  # no describe: the manifest beside it says what it is
        reply = {"id": req["id"], "error": {"code": "invalid_request", "message": "unknown"}}
    print(json.dumps(reply), flush=True)
