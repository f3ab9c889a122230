"""The import guard: an early warning about plugin code that reaches past ``host``.

Two halves share one rule table. :func:`scan_folder` reads every ``.py`` file of a package
as an AST (nothing is executed) and reports each forbidden import or call with file, line
and rule; the installer refuses an untrusted package with findings unless the operator
overrides. :func:`install` puts a hook into a worker process so that code under the plugin's
folder cannot import those modules at run time.

Neither half is a security boundary — ``sys.modules``, ``getattr`` chains and
``__builtins__`` tricks all get past an import hook, and the AST cannot see strings built at
run time. The sandbox (docs/packages.md) is the boundary; this catches honest mistakes and
careless copies early, with a clear message.
"""

from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Rule codes, stable: tests and operators match on them, never on messages.
HOST_INTERNAL = "host_internal"
HTTP_CLIENT = "http_client"
NATIVE_CODE = "native_code"
PROCESS = "process"
DYNAMIC_IMPORT = "dynamic_import"
UNPARSEABLE = "unparseable"

#: What plugin code may take from plugyard: the plugin-authoring names of the public API
#: (``from plugyard import tool``), and a future ``plugyard.sdk``. The rest is the host.
PUBLIC_NAMES = frozenset(
    {"tool", "plugin", "inline", "definition_of", "PluginDefinition", "Outcome", "Progress",
     "ErrorInfo", "PlugyardError"}
)  # fmt: skip
PUBLIC_MODULES = frozenset({"plugyard.sdk"})

#: Modules plugin code may not import, each with its rule (a module and its submodules).
FORBIDDEN_MODULES: Mapping[str, str] = {
    "requests": HTTP_CLIENT,
    "httpx": HTTP_CLIENT,
    "aiohttp": HTTP_CLIENT,
    "urllib3": HTTP_CLIENT,
    "urllib.request": HTTP_CLIENT,
    "http.client": HTTP_CLIENT,
    "socket": HTTP_CLIENT,
    "ssl": HTTP_CLIENT,
    "ctypes": NATIVE_CODE,
    "cffi": NATIVE_CODE,
    "subprocess": PROCESS,
    "pty": PROCESS,
    "multiprocessing": PROCESS,
    "importlib": DYNAMIC_IMPORT,
}
#: Submodules of forbidden packages that only read data: vendored libraries use them for
#: their own version and resources.
HARMLESS_MODULES = frozenset({"importlib.metadata", "importlib.resources"})
#: ``from os import system`` and ``os.system(...)``: process spawning through ``os``.
FORBIDDEN_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "os": frozenset(
        {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve",
         "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve",
         "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe"}
    ),
    "urllib": frozenset({"request"}),
    "http": frozenset({"client"}),
}  # fmt: skip
_MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Finding:
    """One forbidden use: where (path relative to the scanned folder, 1-based line), which
    rule, and what was named."""

    path: str
    line: int
    rule: str
    name: str

    @property
    def message(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.name}"

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "rule": self.rule, "name": self.name}


def rule_for_import(module: str, names: Sequence[str] = ()) -> tuple[str, str] | None:
    """``(rule, what)`` when importing ``module`` (``from module import names``) is
    forbidden; ``None`` when it is allowed."""
    if module == "plugyard" or module.startswith("plugyard."):
        if module in PUBLIC_MODULES or any(module.startswith(f"{m}.") for m in PUBLIC_MODULES):
            return None
        if module != "plugyard":
            return HOST_INTERNAL, module
        private = [n for n in names if n not in PUBLIC_NAMES and n != "*"]
        if "*" in names or private:
            return HOST_INTERNAL, f"plugyard.{(private or ['*'])[0]}"
        return None
    if module in HARMLESS_MODULES or any(module.startswith(f"{m}.") for m in HARMLESS_MODULES):
        return None
    for forbidden, rule in FORBIDDEN_MODULES.items():
        if module == forbidden or module.startswith(f"{forbidden}."):
            return rule, module
    attributes = FORBIDDEN_ATTRIBUTES.get(module, frozenset())
    for name in names:
        if name in attributes:
            full = f"{module}.{name}"
            return FORBIDDEN_MODULES.get(full, PROCESS), full
    return None


# ---------------------------------------------------------------------------- static scan


def scan_source(text: str, path: str = "<string>") -> list[Finding]:
    """The findings of one Python source text."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        return [Finding(path, getattr(exc, "lineno", None) or 1, UNPARSEABLE, type(exc).__name__)]
    found: list[Finding] = []
    for node in ast.walk(tree):
        hit = _node_rule(node)
        if hit is not None:
            found.append(Finding(path, getattr(node, "lineno", 1), *hit))
    return found


def scan_folder(folder: Path) -> list[Finding]:
    """The findings of every ``.py`` file under ``folder`` (its ``vendor/`` included:
    vendored code runs with the plugin's rights), in path order. Symlinks are not followed."""
    found: list[Finding] = []
    for file in _python_files(folder):
        relative = file.relative_to(folder).as_posix()
        if file.stat().st_size > _MAX_FILE_BYTES:
            found.append(Finding(relative, 1, UNPARSEABLE, "file too large to scan"))
            continue
        text = file.read_bytes().decode("utf-8", errors="replace")
        found.extend(scan_source(text, relative))
    return found


def _python_files(folder: Path) -> Iterator[Path]:
    for here, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(here, name)
            if name.endswith(".py") and not path.is_symlink():
                yield path


def _node_rule(node: ast.AST) -> tuple[str, str] | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            hit = rule_for_import(alias.name)
            if hit is not None:
                return hit
        return None
    if isinstance(node, ast.ImportFrom):
        if node.level:  # relative: the plugin's own modules
            return None
        return rule_for_import(node.module or "", [a.name for a in node.names])
    if isinstance(node, ast.Call):
        return _call_rule(node.func)
    return None


def _call_rule(func: ast.expr) -> tuple[str, str] | None:
    if isinstance(func, ast.Name) and func.id == "__import__":
        return DYNAMIC_IMPORT, "__import__"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner, name = func.value.id, func.attr
        if name in FORBIDDEN_ATTRIBUTES.get("os", frozenset()) and owner == "os":
            return PROCESS, f"os.{name}"
        if owner == "importlib" and name in {"import_module", "__import__"}:
            return DYNAMIC_IMPORT, f"importlib.{name}"
    return None


# ---------------------------------------------------------------------------- runtime hook


class GuardedImportError(ImportError):
    """An import the guard refused; ``rule`` is the rule code."""

    def __init__(self, rule: str, name: str) -> None:
        super().__init__(f"plugin code may not import {name} ({rule}): use the host object")
        self.rule = rule


class ImportGuard(importlib.abc.MetaPathFinder):
    """Refuses forbidden imports made by code under ``root``.

    Two doors: ``builtins.__import__`` (every ``import`` statement, also of modules already
    in ``sys.modules``, which a finder never sees) and this meta-path finder (imports through
    ``importlib`` machinery of modules not loaded yet). Imports made by the standard library
    or the host on the plugin's behalf pass: only the importing frame's file counts.
    """

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._previous: Callable[..., types.ModuleType] | None = None
        # Every import statement of the process passes here: resolve each file once.
        self._owned: dict[str, bool] = {}

    def owns(self, filename: str | None) -> bool:
        if not filename or filename.startswith("<"):
            return False
        known = self._owned.get(filename)
        if known is None:
            real = os.path.realpath(filename)
            known = real == self.root or real.startswith(self.root + os.sep)
            self._owned[filename] = known
        return known

    def guarded_import(
        self,
        name: str,
        globals: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> types.ModuleType:
        if level == 0 and globals is not None and self.owns(globals.get("__file__")):
            hit = rule_for_import(name, tuple(fromlist or ()))
            if hit is not None:
                raise GuardedImportError(*hit)
        assert self._previous is not None
        return self._previous(name, globals, locals, fromlist, level)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        hit = rule_for_import(fullname)
        if hit is not None and self.owns(_importer_file()):
            raise GuardedImportError(*hit)
        return None  # not ours to load: the next finder does


_INSTALLED: list[ImportGuard] = []
_LOCK = threading.Lock()


def install(plugin_root: str) -> None:
    """Guard this process's imports from code under ``plugin_root`` (for the worker that
    runs one plugin). Installing again replaces the previous guard."""
    with _LOCK:
        _remove_locked()
        guard = ImportGuard(plugin_root)
        guard._previous = builtins.__import__
        builtins.__import__ = guard.guarded_import
        sys.meta_path.insert(0, guard)
        _INSTALLED.append(guard)


def uninstall() -> None:
    """Remove the guard :func:`install` put in (tests; a worker never needs to)."""
    with _LOCK:
        _remove_locked()


def _remove_locked() -> None:
    while _INSTALLED:
        guard = _INSTALLED.pop()
        if builtins.__import__ == guard.guarded_import and guard._previous is not None:
            builtins.__import__ = guard._previous
        if guard in sys.meta_path:
            sys.meta_path.remove(guard)


def _importer_file() -> str | None:
    """The file of the first frame outside the import machinery: who asked for the import."""
    frame = sys._getframe(2)
    machinery = os.path.dirname(importlib.__file__ or "")
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<frozen") and os.path.dirname(filename) != machinery:
            return filename
        frame = frame.f_back  # type: ignore[assignment]
    return None
