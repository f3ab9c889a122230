"""The two conventions beside plugyard's newline-JSON protocol that MRP-VM plugins speak.

- **MRP-VM typed plugins in JavaScript** (``plugin.json`` + ``index.mjs``): run by
  plugyard's Node host (``mrp_host.mjs``), which speaks plugyard's protocol and loads the
  module as MRP-VM's built-in loader does. Its model bridge and ``externalHelpers`` are
  host calls (``llm.chat``, ``helpers.collect``), served from the call's own context:
  the reasoning loop's counted :class:`~plugyard.reasoning.bridge.ModelBridge` and the
  DS016 helpers the context offers — never anything the call was not given.
- **DS016 wrappers** (MRP-VM's external helpers): one process per call, the JSON
  ``{prompt, context}`` on stdin until EOF, the ``## Plugin Result`` document on stdout,
  exit code 0 (success), 1 (processing error), 2 (invalid input), 3 (internal timeout).
  The manifest chooses it (docs/dialects/mrp.md, "Conventions").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any

from plugyard.manifest.dialects.mrp_fields import NODE_HOST
from plugyard.manifest.model import PluginDescriptor, SubprocessRuntime
from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome
from plugyard.runtimes.subprocess.process import kill_tree, spawn
from plugyard.runtimes.subprocess.spec import SubprocessSettings, WrapperSpec

DS016 = "ds016"
RESULT_HEADING = "## Plugin Result"
#: DS016 exit codes → plugyard's (0 is success).
_EXIT_CODES = {1: "plugin_error", 2: "invalid_parameters", 3: "timeout"}
_FIELDS = ("Status", "Plugin", "Confidence", "Result", "Evidence")


def is_ds016(descriptor: PluginDescriptor) -> bool:
    return (
        isinstance(descriptor.runtime, SubprocessRuntime)
        and descriptor.config.get("convention") == DS016
    )


def is_node_host(descriptor: PluginDescriptor) -> bool:
    runtime = descriptor.runtime
    return isinstance(runtime, SubprocessRuntime) and NODE_HOST in runtime.args


class ContextHost:
    """The host object a Node-hosted plugin's host calls reach: the executor's gated
    host, plus the call context's own model bridge (``llm``) and DS016 helpers."""

    def __init__(self, host: Any, context: CallContext) -> None:
        self._host = host
        self._callbacks = context.callbacks

    def __getattr__(self, name: str) -> Any:
        if name == "llm":
            bridge = self._callbacks.get("llm")
            if bridge is None:
                raise HostRefusal("capability_unavailable", "this call has no model bridge")
            return bridge
        if name == "helpers":
            return _Helpers(self._callbacks.get("externalHelpers"))
        if self._host is None:
            raise HostRefusal("capability_unavailable", "this call has no host object")
        return getattr(self._host, name)


class HostRefusal(Exception):
    """What the call's context does not offer (served as its ``code``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Helpers:
    """MRP-VM's ``externalHelpers``: ``collect`` asks the context's helpers, if any."""

    def __init__(self, helpers: Any) -> None:
        self._helpers = helpers

    async def collect(self, resolved_intents: Any) -> list[Any]:
        collect = getattr(self._helpers, "collect_outputs", None)
        if collect is None:
            return []
        found = collect(resolved_intents)
        return list(await found if asyncio.iscoroutine(found) else found)

    async def list(self) -> list[Any]:
        listed = getattr(self._helpers, "list", None)
        return list(listed()) if listed is not None else []


# ------------------------------------------------------------------ DS016


async def invoke_ds016(
    spec: WrapperSpec, settings: SubprocessSettings, params: Mapping[str, Any]
) -> Outcome:
    """One DS016 call: a process of its own, input on stdin until EOF, the result
    document on stdout; the process tree is killed whatever happens."""
    payload = {
        "prompt": str(params.get("prompt") or ""),
        "context": list(params.get("context") or []),
    }
    raw = json.dumps(payload, ensure_ascii=False).encode()
    if len(raw) > spec.max_input:
        return _error("invalid_parameters", f"the input is {len(raw)} bytes, over {spec.max_input}")
    confinement = settings.confine() if spec.sandbox else None
    try:
        proc = await spawn(
            spec.launch(settings.limits, confinement),
            env=spec.env,
            cwd=None if spec.sandbox else spec.cwd,
            line_limit=spec.max_line,
        )
    except OSError as exc:
        if confinement is not None:
            confinement.release()
        return _error("plugin_unavailable", f"the DS016 wrapper does not start: {exc}")
    try:
        async with asyncio.timeout(spec.timeout_s):
            stdout, stderr = await _exchange(proc, raw, spec)
            code = await proc.wait()
    except TimeoutError:
        return Outcome(
            status="timeout",
            error=ErrorInfo("timeout", f"the DS016 wrapper gave no result in {spec.timeout_s} s"),
        )
    finally:
        if confinement is not None:
            confinement.kill()
            confinement.release()
        kill_tree(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
    return read_result(code, stdout, stderr, spec.plugin_id)


async def _exchange(
    proc: asyncio.subprocess.Process, raw: bytes, spec: WrapperSpec
) -> tuple[bytes, bytes]:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(raw)
        await proc.stdin.drain()
    proc.stdin.close()
    out, err = await asyncio.gather(
        proc.stdout.read(spec.max_line + 1), proc.stderr.read(spec.max_stderr)
    )
    return out, err


def read_result(code: int, stdout: bytes, stderr: bytes, plugin_id: str) -> Outcome:
    """The outcome a DS016 wrapper's exit code, stdout and stderr stand for."""
    text = stdout.decode("utf-8", "replace")
    problem = _stderr_error(stderr)
    if code != 0:
        mapped = _EXIT_CODES.get(code, "plugin_error")
        message = problem.get("message") or f"the DS016 wrapper exited with {code}"
        details: dict[str, Any] = {"exit_code": code, "convention": DS016}
        if problem.get("code"):
            details["wrapper_code"] = problem["code"]
        return Outcome(
            status="timeout" if mapped == "timeout" else "error",
            error=ErrorInfo(mapped, message, details),
        )
    fields = parse_result(text)
    if fields is None:
        why = "wrote nothing" if not text.strip() else f"wrote no {RESULT_HEADING!r} document"
        return _error(
            "mrp_wrapper_no_result",
            f"the DS016 wrapper {why} on stdout",
            {"convention": DS016, "stderr": stderr.decode("utf-8", "replace")[-2000:]},
        )
    status = fields.get("Status", "").lower()
    data = {
        "status": status or "error",
        "plugin": fields.get("Plugin") or plugin_id,
        "confidence": (fields.get("Confidence") or "").lower() or None,
        "result": fields.get("Result"),
        "evidence": fields.get("Evidence"),
        "resultCNL": fields.get("Result"),
    }
    if status != "success":
        message = fields.get("Result") or "the DS016 wrapper reported Status: error"
        return _error("plugin_error", message, {"convention": DS016, "result": data})
    return Outcome(status="success", data=data)


def parse_result(text: str) -> dict[str, str] | None:
    """The ``Key: value`` lines under ``## Plugin Result``; ``None`` without it."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == RESULT_HEADING)
    except StopIteration:
        return None
    fields: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() in _FIELDS:
            fields[key.strip()] = value.strip()
    return fields


def _stderr_error(stderr: bytes) -> dict[str, str]:
    """DS016's stderr error line (``{"code", "message"}``), or its last line as text."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in reversed(lines):
        with contextlib.suppress(ValueError):
            found = json.loads(line)
            if isinstance(found, dict):
                return {k: str(v) for k, v in found.items() if k in ("code", "message")}
    return {"message": lines[-1]} if lines else {}


def _error(code: str, message: str, details: dict[str, Any] | None = None) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message, details or {}))
