"""The executor's doubles (a plugin table and a function runtime), shared with
tests/execution: the governed steps run on the same executor."""

from __future__ import annotations

from execution.conftest import FunctionRuntime, Table, descriptor, runtime, table

__all__ = ["FunctionRuntime", "Table", "descriptor", "runtime", "table"]
