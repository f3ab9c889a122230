"""A small MCP server for the runtime's tests, on the official SDK's low-level API.

``python tool_server.py STATE_DIR`` serves over stdio; ``--http`` serves streamable HTTP
on a loopback port it prints first. ``STATE_DIR/variant`` (written by the ``mutate``
tool) changes the ``echo`` tool's description, so a change outlives the process;
``STATE_DIR/grown`` (written by ``grow``) adds a ``shout`` tool.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

import mcp.types as mt
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

STATE = Path(sys.argv[1])
OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
#: The protocol's own stdout: the SDK diverts ``sys.stdout`` to stderr while it serves.
WIRE = os.dup(1)


def variant() -> str:
    path = STATE / "variant"
    return path.read_text() if path.exists() else "v1"


def tools() -> list[mt.Tool]:
    number = {"type": "number"}
    return [
        mt.Tool(
            name="add",
            description="Add two numbers.",
            input_schema={
                "type": "object",
                "properties": {"a": number, "b": number},
                "required": ["a", "b"],
            },
            output_schema={"type": "object", "properties": {"sum": number}, "required": ["sum"]},
            annotations=mt.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        ),
        mt.Tool(
            name="echo",
            description=f"Echo the text back ({variant()}).",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        ),
        mt.Tool(name="fail", description="Always fails.", input_schema=OBJECT),
        mt.Tool(name="hang", description="Never answers.", input_schema=OBJECT),
        mt.Tool(name="pid", description="The server's process id.", input_schema=OBJECT),
        mt.Tool(
            name="big",
            description="n bytes of text.",
            input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
        mt.Tool(name="garbage", description="Writes a non-JSON line.", input_schema=OBJECT),
        mt.Tool(
            name="exists",
            description="Whether a path exists where the server runs.",
            input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        ),
        mt.Tool(name="mutate", description="Changes echo.", input_schema=OBJECT),
        mt.Tool(
            name="liar",
            description="Breaks its own output schema.",
            input_schema=OBJECT,
            output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
        mt.Tool(name="grow", description="Adds the shout tool.", input_schema=OBJECT),
        *(
            [
                mt.Tool(
                    name="shout",
                    description="Upper-cases the text.",
                    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
                )
            ]
            if (STATE / "grown").exists()
            else []
        ),
        mt.Tool(
            name="broken",
            description="An invalid input schema.",
            input_schema={"type": "object", "properties": {"x": {"type": "nope"}}},
        ),
    ]


async def list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
    return mt.ListToolsResult(tools=tools())


def text(value: str) -> list[mt.TextContent]:
    return [mt.TextContent(type="text", text=value)]


async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "add":
        total = args["a"] + args["b"]
        return mt.CallToolResult(content=text(str(total)), structured_content={"sum": total})
    if name == "echo":
        return mt.CallToolResult(content=text(str(args.get("text", ""))))
    if name == "fail":
        return mt.CallToolResult(content=text("it broke"), is_error=True)
    if name == "hang":
        await asyncio.Event().wait()
    if name == "pid":
        return mt.CallToolResult(
            content=text(str(os.getpid())), structured_content={"pid": os.getpid()}
        )
    if name == "big":
        return mt.CallToolResult(content=text("x" * int(args.get("n", 10))))
    if name == "garbage":
        os.write(WIRE, b"this is not json\n")
        await asyncio.Event().wait()
    if name == "exists":
        found = os.path.exists(str(args.get("path")))
        return mt.CallToolResult(content=text(str(found)), structured_content={"exists": found})
    if name == "mutate":
        (STATE / "variant").write_text("v2")
        await ctx.session.send_tool_list_changed()
        return mt.CallToolResult(content=text("mutated"))
    if name == "grow":
        (STATE / "grown").write_text("yes")
        await ctx.session.send_tool_list_changed()
        return mt.CallToolResult(content=text("grown"))
    if name == "shout":
        return mt.CallToolResult(content=text(str(args.get("text", "")).upper()))
    if name == "liar":
        return mt.CallToolResult(content=text("n"), structured_content={"n": "not a number"})
    return mt.CallToolResult(content=text(f"unknown tool {name}"), is_error=True)


server = Server("plugyard-test-tools", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http() -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        asyncio.run(serve_stdio())
