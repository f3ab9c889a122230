"""Plugins of a folder described as registration describes them, registering nothing.

Registration refines a descriptor from its plugin's code (a Shu class's ``get_schema()``,
a typed function's signature: see :func:`plugyard.yard.check`), so a manifest alone can
say less than the registry. ``plugyard export`` reads a folder the same way: when the
folder is trusted, each Python plugin's code is loaded by an in-process runtime of its
own and checked as the registry would check it. A folder is trusted when it is the
bundled one or lies in ``PLUGYARD_PLUGIN_DIRS`` (both are folders the registry trusts),
or when the caller says so; the code of any other folder is never imported.

Where parameters can only come from code and the code did not give them, a note says why.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plugyard.builtins import BUILTINS_DIR
from plugyard.errors import Problem
from plugyard.manifest.load import ManifestDocument, load_file
from plugyard.manifest.model import EMPTY_PARAMETERS, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.python.runtime import InProcessRuntime
from plugyard.yard import Settings, check

#: The warning code of a plugin whose parameters only its code can give.
FROM_CODE = "parameters_from_code"


@dataclass(frozen=True)
class Described:
    plugins: tuple[PluginDescriptor, ...]
    notes: tuple[Problem, ...]


def trusted(path: Path, plugin_dirs: Sequence[Path] | None = None) -> bool:
    """Whether the registry would trust the code under ``path``."""
    dirs = Settings.from_env().plugin_dirs if plugin_dirs is None else plugin_dirs
    target = path.resolve()
    roots = [BUILTINS_DIR.resolve(), *(Path(d).resolve() for d in dirs)]
    return any(target == root or root in target.parents for root in roots)


def guessed_operations(plugin: PluginDescriptor, dialect: str) -> list[str]:
    """The operations of a Shu plugin whose parameters its manifest could not give: Shu
    keeps them in the class (``get_schema()``), so the reader leaves none, or only the
    ``op`` names the manifest mentions."""
    if dialect != "shu" or plugin.runtime.kind != "python":
        return []
    return [op.id for op in plugin.operations if _guessed(op.parameters)]


def _guessed(parameters: Mapping[str, object]) -> bool:
    properties = parameters.get("properties")
    return parameters == EMPTY_PARAMETERS or (
        isinstance(properties, dict) and set(properties) == {"op"} and "required" not in parameters
    )


def dialect_of(doc: ManifestDocument, index: int) -> str:
    return doc.dialects[index] if index < len(doc.dialects) else doc.dialect


def describe_files(files: Sequence[Path], *, load_code: bool) -> Described:
    """The plugins the manifest ``files`` declare, refined from their code when
    ``load_code``; raises ``ManifestError`` for a manifest that cannot be read."""
    runtimes = {"python": InProcessRuntime()}
    plugins: list[PluginDescriptor] = []
    notes: list[Problem] = []
    for file in files:
        doc = load_file(file)
        for index, descriptor in enumerate(doc.plugins):
            dialect = dialect_of(doc, index)
            failure: str | None = None
            if load_code and descriptor.runtime.kind == "python":
                folder = file.resolve().parent
                registered = RegisteredPlugin.of(
                    descriptor, "folder", trust="trusted", location=str(folder),
                    manifest_path=str(file.resolve()), dialect=dialect,
                )  # fmt: skip
                with _no_bytecode():
                    checked = check(registered, runtimes)
                descriptor, failure = checked.descriptor, checked.unavailable_reason
            plugins.append(descriptor)
            if guessed_operations(descriptor, dialect):
                notes.append(Problem(FROM_CODE, "", _why(descriptor, load_code, failure)))
    return Described(tuple(plugins), tuple(notes))


def _why(plugin: PluginDescriptor, loaded: bool, failure: str | None) -> str:
    lead = f"{plugin.id}: its parameters come from its code (get_schema())"
    if not loaded:
        why = "which is loaded only from a trusted folder (--load-code trusts this one)"
    elif failure:
        why = f"which could not be loaded: {failure}"
    else:
        why = "which gives none"
    return f"{lead}, {why}; exported without parameters"


def validate_note(plugin: PluginDescriptor, dialect: str) -> Problem | None:
    """The ``validate`` warning for a plugin whose parameters only its code can give."""
    if not guessed_operations(plugin, dialect):
        return None
    return Problem(
        FROM_CODE,
        "",
        f"{plugin.id}: a Shu manifest cannot give parameters; they come from the class's "
        "get_schema() when its code loads (at registration, or plugyard export of a "
        "trusted folder)",
    )


@contextmanager
def _no_bytecode() -> Iterator[None]:
    # Export writes nothing, __pycache__ in a plugin folder included.
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = before
