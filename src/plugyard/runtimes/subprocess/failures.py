"""Why a request on a worker got no answer from its wrapper.

``worker_lost`` is the one code for a request whose worker went away under it; its
``cause`` detail says how: ``sibling_abandoned`` (killed because another request on the
same worker was given up and the wrapper could not stop it), ``memory_cap`` (a process of
its sandbox was killed at the sandbox's memory cap), ``exited`` (it crashed or closed its
stdout), ``stopped`` (its plugin was removed or upgraded, or the runtime closed) or
``retired`` (idle, it kept zombie processes). The caller did not go away — that alone is
``cancelled`` — and what the request did before is unknown.
"""

from __future__ import annotations

from typing import Any


class WorkerFailure(Exception):
    """A request could not be answered: ``code`` is from errors.py."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details


def lost(message: str, cause: str) -> WorkerFailure:
    return WorkerFailure("worker_lost", message, cause=cause)


def protocol_failure(message: str) -> WorkerFailure:
    return WorkerFailure("wrapper_protocol_error", message)
