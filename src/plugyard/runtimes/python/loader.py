"""Import a plugin's code: an entrypoint, or the code beside its manifest.

Code in a plugin folder is imported under a private package name,
``_plugyard_plugins.p<key>``, whose path is that folder: two plugins' ``plugin.py`` never
collide and relative imports work. While the code loads, the folder and its ``vendor/``
are at the front of ``sys.path`` (so the plugin's absolute imports of its own packages
and vendored dependencies resolve); afterwards they leave ``sys.path`` and every module
imported from the folder leaves ``sys.modules``, so the next plugin's ``vendor/`` gives
it its own copies. Vendored dependencies must therefore be imported when the plugin
module loads, not lazily inside a call. ``.pth`` files are never processed: nothing here
calls ``site.addsitedir``.

An entrypoint (``pkg.mod:Attr`` or dotted ``pkg.mod.Attr``) is looked for in the plugin
folder first, also by its trailing parts (Shu writes ``plugins.<dir>.plugin:Class`` for a
manifest that sits in ``<dir>``), and then among installed packages.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT_PACKAGE = "_plugyard_plugins"
#: Files tried, in order, when a plugin names no entrypoint: ``plugin.py`` (or a
#: ``plugin/`` package), then a module or package named after the plugin id.
DEFAULT_MODULE = "plugin"
# sys.path and sys.modules are process-wide: one load at a time.
_LOCK = threading.RLock()


class LoadError(Exception):
    """The code cannot be found or imported; the message is the reason."""


def private_prefix(plugin_id: str, key: str, folder: Path) -> str:
    digest = hashlib.sha256(f"{plugin_id}\0{key}\0{folder}".encode()).hexdigest()[:16]
    return f"{ROOT_PACKAGE}.p{digest}"


def load(entrypoint: str | None, plugin_id: str, folder: Path | None, key: str) -> Any:
    """The object ``entrypoint`` names (a module when it names none)."""
    if entrypoint is None:
        if folder is None:
            raise LoadError("the plugin names no entrypoint and has no folder with code")
        relative = _default_module(folder, plugin_id)
        if relative is None:
            raise LoadError(f"no {DEFAULT_MODULE}.py or package beside the manifest in {folder}")
        return _import_local(folder, relative, private_prefix(plugin_id, key, folder))
    candidates = _splits(entrypoint)
    if folder is not None:
        for module_parts, attribute in candidates:
            relative = _local(folder, module_parts)
            if relative is not None:
                module = _import_local(folder, relative, private_prefix(plugin_id, key, folder))
                return _attribute(module, attribute, entrypoint)
    missing: ModuleNotFoundError | None = None
    for module_parts, attribute in candidates:
        name = ".".join(module_parts)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (name == exc.name or name.startswith(f"{exc.name}.")):
                missing = missing or exc
                continue  # this prefix is not a module; try a shorter one
            raise  # the module exists but one of its own imports is missing
        return _attribute(module, attribute, entrypoint)
    raise LoadError(f"cannot import {entrypoint!r}: {missing}")


def purge(prefix: str) -> None:
    """Forget every module imported under one private prefix."""
    with _LOCK:
        for name in [n for n in sys.modules if n == prefix or n.startswith(f"{prefix}.")]:
            del sys.modules[name]


# ------------------------------------------------------------------------------- finding


def _splits(entrypoint: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``(module parts, attribute parts)`` candidates, the longest module first."""
    if ":" in entrypoint:
        module, _, attribute = entrypoint.partition(":")
        splits = [(tuple(module.split(".")), tuple(attribute.split(".")) if attribute else ())]
    else:
        parts = tuple(entrypoint.split("."))
        splits = [(parts[:i], parts[i:]) for i in range(len(parts), 0, -1)]
    for module_parts, attribute_parts in splits:
        if not all(p.isidentifier() for p in (*module_parts, *attribute_parts)):
            raise LoadError(f"{entrypoint!r} is not an entrypoint ('pkg.module:Attribute')")
    return splits


def _exists(folder: Path, parts: tuple[str, ...]) -> bool:
    base = folder.joinpath(*parts)
    return base.with_name(f"{parts[-1]}.py").is_file() or (base / "__init__.py").is_file()


def _local(folder: Path, module_parts: tuple[str, ...]) -> tuple[str, ...] | None:
    for start in range(len(module_parts)):
        relative = module_parts[start:]
        if _exists(folder, relative):
            return relative
    return None


def _default_module(folder: Path, plugin_id: str) -> tuple[str, ...] | None:
    own = "".join(c if c.isalnum() or c == "_" else "_" for c in plugin_id)
    for name in (DEFAULT_MODULE, own):
        if name.isidentifier() and _exists(folder, (name,)):
            return (name,)
    return () if (folder / "__init__.py").is_file() else None


def _attribute(module: Any, attribute: tuple[str, ...], entrypoint: str) -> Any:
    found = module
    for name in attribute:
        try:
            found = getattr(found, name)
        except AttributeError:
            raise LoadError(f"{entrypoint!r}: {name!r} not found") from None
    return found


# ------------------------------------------------------------------------------ importing


def _import_local(folder: Path, relative: tuple[str, ...], prefix: str) -> Any:
    with _LOCK, _scoped_path(folder):
        package = sys.modules.get(prefix) or _private_package(folder, prefix)
        if not relative:
            return package
        return importlib.import_module(".".join((prefix, *relative)))


def _private_package(folder: Path, name: str) -> types.ModuleType:
    if ROOT_PACKAGE not in sys.modules:
        root = types.ModuleType(ROOT_PACKAGE, "Plugin code imported by plugyard.")
        root.__path__ = []
        sys.modules[ROOT_PACKAGE] = root
    init = folder / "__init__.py"
    spec: importlib.machinery.ModuleSpec | None
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(folder)]
        )
    else:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@contextmanager
def _scoped_path(folder: Path) -> Iterator[None]:
    vendor = folder / "vendor"
    entries = [str(p) for p in (vendor, folder) if p.is_dir()]
    before = set(sys.modules)
    sys.path[:0] = entries
    importlib.invalidate_caches()
    try:
        yield
    finally:
        for entry in entries:
            if entry in sys.path:
                sys.path.remove(entry)
        root = folder.resolve()
        for name in set(sys.modules) - before:
            if name.startswith(f"{ROOT_PACKAGE}."):
                continue
            if _inside(sys.modules[name], root):
                del sys.modules[name]


def _inside(module: types.ModuleType, root: Path) -> bool:
    file = getattr(module, "__file__", None)
    spec = getattr(module, "__spec__", None)
    places = [file] if file else list(getattr(spec, "submodule_search_locations", None) or ())
    return any(Path(place).resolve().is_relative_to(root) for place in places)
