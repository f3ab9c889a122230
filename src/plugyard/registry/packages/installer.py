"""Installing a package zip under the packages root, all or nothing.

Layout: ``<root>/<name>/files/`` holds what the zip held, and ``<root>/<name>/install.json``
what the operator decided (trust, the guard's findings and whether they were overridden)
— beside the files, never among them, so nothing in a zip can set its own trust. The zip
is extracted into a fresh ``<root>/.staging-*`` folder, its manifest read there and its
code scanned; only then is the folder renamed into place (an upgrade swaps the old one
out). Any refusal removes the staging folder: nothing is left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from plugyard.errors import PackageError
from plugyard.registry.model import Trust
from plugyard.registry.packages.archive import Limits, extract
from plugyard.registry.sources import load_manifest, manifest_of

RECORD = "install.json"
FILES = "files"
NO_MANIFEST = "no_manifest"
MANIFEST_INVALID = "manifest_invalid"
BAD_NAME = "bad_name"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


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
        )


class Installer:
    """Packages under ``root``: install, list, remove. ``scan`` is the import guard's
    static scan; without one, nothing is scanned."""

    def __init__(
        self, root: Path, *, scan: Scanner | None = None, limits: Limits | None = None
    ) -> None:
        self.root = Path(root)
        self.scan = scan
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
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
        try:
            files = staging / FILES
            files.mkdir()
            extract(archive, files, self.limits)  # checks the archive's size first
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
            (staging / RECORD).write_text(json.dumps(record.to_dict(), indent=2), "utf-8")
            with self._lock:
                self._swap_in(staging, record.folder)
            return record
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone already when renamed

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
        with self._lock:
            aside = Path(tempfile.mkdtemp(prefix=".removed-", dir=self.root))
            os.rename(package.folder, aside / "old")
            shutil.rmtree(aside, ignore_errors=True)
        return package

    def _swap_in(self, staging: Path, final: Path) -> None:
        if not final.exists():
            os.rename(staging, final)
            return
        aside = Path(tempfile.mkdtemp(prefix=".replaced-", dir=self.root))
        os.rename(final, aside / "old")
        try:
            os.rename(staging, final)
        except OSError:
            os.rename(aside / "old", final)
            raise
        finally:
            shutil.rmtree(aside, ignore_errors=True)


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
    return [p.id for p in result.plugins]
