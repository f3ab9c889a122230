"""A wrapper that misbehaves on request: ``parameters.do`` says how (test fixture)."""

import json
import os
import signal
import sys
import time


def send(obj, end="\n"):
    sys.stdout.write(json.dumps(obj) + end)
    sys.stdout.flush()


def grandchild():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(600)
        os._exit(0)
    return pid


for line in sys.stdin:
    req = json.loads(line)
    ident = req["id"]
    if req["method"] == "describe":
        lie = os.environ.get("LIE")
        if lie == "garbage":
            send({"id": ident, "result": {"nothing": "here"}})
        elif lie == "ops":
            send(
                {
                    "id": ident,
                    "result": {
                        "$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json",
                        "id": "chaos",
                        "name": "chaos",
                        "operations": [{"id": "other"}],
                        "runtime": {"kind": "subprocess", "command": "python3"},
                    },
                }
            )
        elif lie == "junk":
            send({"id": ident}, end="oops\n")
        elif lie == "crash_unless_ready" and not os.path.exists("ready"):
            os._exit(1)
        else:
            send({"id": ident, "error": {"code": "invalid_request", "message": "no describe"}})
        continue
    params = req["params"]["parameters"]
    do = params.get("do", "echo")
    if do == "echo":
        send({"id": ident, "result": {"data": params}})
    elif do == "slow":
        time.sleep(params.get("seconds", 0.3))
        send({"id": ident, "result": {"data": os.getpid()}})
    elif do == "pid":
        send({"id": ident, "result": {"data": os.getpid()}})
    elif do == "hang":
        time.sleep(600)
    elif do == "log_crash":  # leaves a line in ./runs, then dies without a reply
        with open("runs", "a") as runs:
            runs.write("ran\n")
        os._exit(3)
    elif do == "crash_mid":
        sys.stdout.write(f'{{"id": {ident}, "result": {{"da')
        sys.stdout.flush()
        os._exit(3)
    elif do == "big_line":
        chunk = "x" * (1 << 20)
        sys.stdout.write(f'{{"id": {ident}, "result": {{"data": "')
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(600)
    elif do == "no_newline":
        send({"id": ident, "result": {"data": 1}}, end="")
        time.sleep(600)
    elif do == "close_stdout":
        os.close(1)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - kept open on purpose
        time.sleep(600)
    elif do == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    elif do == "grandchild":
        grandchild()
        time.sleep(600)
    elif do == "grandchild_reply":
        grandchild()
        send({"id": ident, "result": {"data": "left one behind"}})
    elif do == "daemon_reply":  # a setsid grandchild left running, its parent collected
        os.waitpid(grandchild(), 0)
        send({"id": ident, "result": {"data": "left one behind"}})
    elif do == "zombie_reply":  # a child that exited and is never collected
        if os.fork() == 0:
            os._exit(0)
        send({"id": ident, "result": {"data": "left a zombie"}})
    elif do == "bad_json":
        sys.stdout.write("{not json\n")
        sys.stdout.flush()
    elif do == "bad_version":
        send({"protocolVersion": 7, "id": ident, "result": {}})
    elif do == "unknown_id":
        send({"id": ident + 1000, "result": {}})
    elif do == "bad_result":
        send({"id": ident, "result": {"weird": 1}})
    elif do == "progress":
        for i in range(3):
            send({"id": ident, "progress": {"message": f"step {i}", "percent": i * 50}})
        send({"id": ident, "result": {"data": "done"}})
    elif do == "host":
        send(
            {
                "id": "h1",
                "method": "host",
                "params": {
                    "capability": "cache",
                    "call": params.get("call", "get"),
                    "args": ["k"],
                    "kwargs": {},
                    "request": ident,
                },
            }
        )
        answer = json.loads(sys.stdin.readline())
        send({"id": ident, "result": {"data": answer}})
    elif do == "error":
        send({"id": ident, "error": {"code": "my_own_code", "message": "nope"}})
