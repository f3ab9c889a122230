"""Installing a package zip under the packages root, all or nothing.

Layout: ``<root>/<name>/files/`` holds what the zip held, and ``<root>/<name>/install.json``
what the operator decided (trust, the guard's findings and whether they were overridden)
— beside the files, never among them, so nothing in a zip can set its own trust. The zip
is extracted into a fresh ``<root>/.staging-*`` folder, its manifest read there and its
code scanned; only then is the folder renamed into place (an upgrade swaps the old one
out). Any refusal removes the staging folder: nothing is left behind.

A process killed mid-way can still leave a folder behind. Each staging folder has a
sibling ``.lock`` file that its installer holds an ``flock`` on, and swaps and removals
run under one ``flock`` on ``<root>/.lock``, so `Installer.sweep` can tell a dead
installer's leftovers from a live one's work, even across processes sharing the root.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from plugyard.errors import ManifestError, PackageError
from plugyard.manifest.auth_fields import faults as auth_faults
from plugyard.manifest.bindings import faults as binding_faults
from plugyard.registry.model import Trust
from plugyard.registry.packages.archive import Limits, extract
from plugyard.registry.packages.venvs import VenvPolicy, needs_venv
from plugyard.registry.packages.venvs import build as build_venv
from plugyard.registry.sources import load_manifest, manifest_of

RECORD = "install.json"
FILES = "files"
NO_MANIFEST = "no_manifest"
MANIFEST_INVALID = "manifest_invalid"
BAD_NAME = "bad_name"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_STAGING, _REMOVED, _REPLACED, _LOCK = ".staging-", ".removed-", ".replaced-", ".lock"


class FindingLike(Protocol):
    """What the import guard reports (``plugyard.runtimes.python.guard.Finding``)."""

    @property
    def message(self) -> str: ...

    def to_dict(self) -> dict[str, object]: ...


#: Scans an extracted package folder; injected by the yard (registry never imports runtimes).
Scanner = Callable[[Path], Sequence[FindingLike]]


@dataclass(frozen=True, slots=True)
class InstalledPackage:
    """One installed package, as its ``install.json`` records it."""

    name: str
    folder: Path
    trust: Trust
    sha256: str
    installed_at: str
    plugins: tuple[str, ...]
    vendor: bool = False
    findings: tuple[dict[str, Any], ...] = ()
    guard_overridden: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    #: whether the package runs from a virtual environment of its own (venvs.py)
    venv: bool = False

    @property
    def files(self) -> Path:
        return self.folder / FILES

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trust": self.trust,
            "sha256": self.sha256,
            "installed_at": self.installed_at,
            "plugins": list(self.plugins),
            "vendor": self.vendor,
            "findings": [dict(f) for f in self.findings],
            "guard_overridden": self.guard_overridden,
            "venv": self.venv,
        }

    @classmethod
    def read(cls, folder: Path) -> InstalledPackage:
        data = json.loads((folder / RECORD).read_text("utf-8"))
        trust: Trust = "trusted" if data.get("trust") == "trusted" else "untrusted"
        return cls(
            name=str(data["name"]),
            folder=folder,
            trust=trust,
            sha256=str(data.get("sha256", "")),
            installed_at=str(data.get("installed_at", "")),
            plugins=tuple(str(p) for p in data.get("plugins", ())),
            vendor=bool(data.get("vendor", False)),
            findings=tuple(dict(f) for f in data.get("findings", ())),
            guard_overridden=bool(data.get("guard_overridden", False)),
            venv=bool(data.get("venv", False)),
        )


class Installer:
    """Packages under ``root``: install, list, remove. ``scan`` is the import guard's
    static scan; without one, nothing is scanned."""

    def __init__(
        self,
        root: Path,
        *,
        scan: Scanner | None = None,
        limits: Limits | None = None,
        venvs: VenvPolicy | None = None,
    ) -> None:
        self.root = Path(root)
        self.scan = scan
        self.venvs = venvs
        self.limits = limits or Limits()
        self._lock = threading.Lock()

    def install(
        self,
        archive: bytes | Path,
        *,
        trust: Trust = "untrusted",
        allow_findings: bool = False,
        name: str | None = None,
        vet: Callable[[str, Sequence[str]], None] | None = None,
    ) -> InstalledPackage:
        """Install (or upgrade) one package. ``trust`` and ``allow_findings`` are the
        operator's; an untrusted package with guard findings is ``package_refused``
        unless ``allow_findings``. ``vet(name, plugin_ids)`` may refuse (raise) before
        anything is put in place."""
        self.root.mkdir(parents=True, exist_ok=True)
        # The lock file exists (and is held) before its folder and outlives it, so a
        # staging folder whose lock can be taken belongs to nobody.
        fd, lock_path = tempfile.mkstemp(prefix=_STAGING, suffix=_LOCK, dir=self.root)
        fcntl.flock(fd, fcntl.LOCK_EX)
        staging = _staging_of(lock_path)
        try:
            staging.mkdir()
            files = staging / FILES
            files.mkdir()
            extract(archive, files, self.limits)  # checks the archive's size first
            _lift_single_folder(files)
            digest = hashlib.sha256(archive if isinstance(archive, bytes) else archive.read_bytes())
            plugins = _plugins(files, trust)
            chosen = name or plugins[0]
            if not _NAME.fullmatch(chosen):
                raise PackageError(f"{chosen!r} cannot name a package folder", reason=BAD_NAME)
            findings = tuple(self.scan(files)) if self.scan is not None else ()
            if findings and trust == "untrusted" and not allow_findings:
                raise PackageError(
                    f"the import guard found {len(findings)} forbidden use(s), first "
                    f"{findings[0].message}",
                    code="package_refused",
                    findings=tuple(f.to_dict() for f in findings),
                )
            record = InstalledPackage(
                name=chosen,
                folder=self.root / chosen,
                trust=trust,
                sha256=digest.hexdigest(),
                installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
                plugins=tuple(plugins),
                vendor=(files / "vendor").is_dir(),
                findings=tuple(f.to_dict() for f in findings),
                guard_overridden=bool(findings) and trust == "untrusted",
            )
            if vet is not None:
                vet(chosen, plugins)
            if needs_venv(files):  # refused when off; built here, so all or nothing
                build_venv(files, self.venvs)
                record = replace(record, venv=True)
            (staging / RECORD).write_text(json.dumps(record.to_dict(), indent=2), "utf-8")
            with self._exclusive():
                self._swap_in(staging, record.folder)
            return record
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone already when renamed
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
            os.close(fd)

    def sweep(self) -> int:
        """Clear what killed installs, upgrades and removals left under the root; returns
        how many leftovers were handled. An upgrade killed between its two renames is
        rolled back: the old version goes back in place."""
        if not self.root.is_dir():
            return 0
        handled = 0
        for lock in self.root.glob(f"{_STAGING}*{_LOCK}"):
            handled += _clear_if_abandoned(lock)
        with self._exclusive():
            for leftover in self.root.iterdir():
                name = leftover.name
                if not leftover.is_dir():
                    continue
                if name.startswith(_STAGING) and not _lock_of(leftover).exists():
                    shutil.rmtree(leftover, ignore_errors=True)  # its installer is gone
                elif name.startswith(_REPLACED):
                    self._restore(leftover / "old")
                    shutil.rmtree(leftover, ignore_errors=True)
                elif name.startswith(_REMOVED):
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    continue
                handled += 1
        return handled

    def _restore(self, old: Path) -> None:
        try:
            name = str(json.loads((old / RECORD).read_text("utf-8"))["name"])
        except (OSError, ValueError, KeyError, TypeError):
            return
        if _NAME.fullmatch(name) and not (self.root / name).exists():
            os.rename(old, self.root / name)

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """One swap or removal at a time, across threads and processes."""
        with self._lock:
            fd = os.open(self.root / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def installed(self) -> list[InstalledPackage]:
        """Every installed package, by name. A folder without a readable record is not one."""
        if not self.root.is_dir():
            return []
        found = []
        for folder in sorted(self.root.iterdir()):
            if folder.name.startswith(".") or not (folder / RECORD).is_file():
                continue
            try:
                found.append(InstalledPackage.read(folder))
            except (OSError, ValueError, KeyError):
                continue
        return found

    def get(self, name: str) -> InstalledPackage:
        folder = self.root / name
        if not _NAME.fullmatch(name) or not (folder / RECORD).is_file():
            raise PackageError(f"no installed package {name!r}", code="package_not_found")
        return InstalledPackage.read(folder)

    def remove(self, name: str) -> InstalledPackage:
        """Delete one package's folder (renamed aside first, so a reader never sees half)."""
        package = self.get(name)
        with self._exclusive():
            aside = Path(tempfile.mkdtemp(prefix=_REMOVED, dir=self.root))
            os.rename(package.folder, aside / "old")
            shutil.rmtree(aside, ignore_errors=True)
        return package

    def _swap_in(self, staging: Path, final: Path) -> None:
        if not final.exists():
            os.rename(staging, final)
            return
        aside = Path(tempfile.mkdtemp(prefix=_REPLACED, dir=self.root))
        os.rename(final, aside / "old")
        try:
            os.rename(staging, final)
        except OSError:
            os.rename(aside / "old", final)
            raise
        finally:
            shutil.rmtree(aside, ignore_errors=True)


def _staging_of(lock: str | Path) -> Path:
    return Path(str(lock)[: -len(_LOCK)])


def _lock_of(staging: Path) -> Path:
    return Path(f"{staging}{_LOCK}")


def _clear_if_abandoned(lock: Path) -> int:
    """Remove a staging folder and its lock file if no live installer holds the lock."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return 0  # its installer finished meanwhile
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # an install in progress
        shutil.rmtree(_staging_of(lock), ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(lock)
        return 1
    finally:
        os.close(fd)


def _lift_single_folder(files: Path) -> None:
    """Shu's installer layout — the plugin inside one top-level folder (what zipping a
    plugin folder gives) — becomes the package itself: the folder's content moves up.
    Anything else is left as it is for :func:`_plugins` to judge."""
    if manifest_of(files) is not None:
        return
    entries = list(files.iterdir())
    if len(entries) != 1 or not entries[0].is_dir() or manifest_of(entries[0]) is None:
        return
    lifted = files.with_name(files.name + ".lifted")
    entries[0].rename(lifted)
    files.rmdir()
    lifted.rename(files)


def _plugins(files: Path, trust: Trust) -> list[str]:
    manifest = manifest_of(files)
    if manifest is None:
        raise PackageError(
            "no manifest (plugin.yaml, manifest.yaml, manifest.py …) at the top of the zip",
            reason=NO_MANIFEST,
        )
    result = load_manifest(manifest, source="folder", trust=trust)
    if result.failures:
        first = result.failures[0]
        raise PackageError(
            f"{manifest.name}: {first.code}: {first.message}", reason=MANIFEST_INVALID
        )
    if not result.plugins:
        raise PackageError(f"{manifest.name} declares no plugin", reason=MANIFEST_INVALID)
    # The registry refuses these too; asking here keeps a refused package off the disk.
    undeclared = [f for p in result.plugins for f in binding_faults(p.descriptor, trust)]
    undeclared += [
        f for p in result.plugins if p.dialect == "shu" for f in auth_faults(p.descriptor)
    ]
    if undeclared:
        raise ManifestError(undeclared, path=manifest.name)
    return [p.id for p in result.plugins]
