"""Incremental sync on start: unchanged plugin folders are not read again, and every
change to a folder — an edit, a touch, a file added or removed, the folder removed or
added — is read as before."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from plugyard.registry import sources
from plugyard.registry.fingerprint import SETTLE_NS
from plugyard.registry.memory import FolderMemory
from plugyard.registry.model import RegisteredPlugin, Trust
from plugyard.registry.registry import Registry
from plugyard.registry.sources import FolderSource, SourceResult
from plugyard.registry.sync import SyncReport, sync_on_start
from plugyard.store.folders import SqlFolderMarks
from plugyard.store.store import Store

MANIFEST = """\
id: {id}
name: {id}
description: {description}
capabilities:
  - id: run
    description: Run it.
"""


def later() -> int:
    """A clock past the settling time of every file a test just wrote."""
    return time.time_ns() + 10 * SETTLE_NS


def add(root: Path, plugin_id: str, description: str = "A plugin.") -> Path:
    folder = root / "tool" / plugin_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text(MANIFEST.format(id=plugin_id, description=description))
    (folder / "plugin.py").write_text("def run() -> dict:\n    return {}\n")
    return folder


@dataclass
class Start:
    report: SyncReport
    plugins: dict[str, RegisteredPlugin]
    read: list[str]  # the plugin folders read (their manifests' folder names)
    remembered: set[str]  # the folders remembered after the start (folder names)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every manifest read, by its folder's name."""
    found: list[str] = []
    real = sources.load_manifest

    def counted(path: Path, **kwargs: object) -> SourceResult:
        found.append(path.parent.name)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sources, "load_manifest", counted)
    return found


@pytest.fixture
def start(database_url: str, tmp_path: Path, reads: list[str]) -> Callable[..., Start]:
    def run(
        *,
        clock: Callable[[], int] = later,
        trust: Trust = "trusted",
        context: str = "test",
        before: Callable[[Registry], object] | None = None,
    ) -> Start:
        reads.clear()
        with Store.open(database_url) as store:
            registry = Registry.over(store)
            if before is not None:
                registry.load()
                before(registry)
            memory = FolderMemory(SqlFolderMarks(store), registry, context=context,
                                  clock_ns=clock)  # fmt: skip
            source = FolderSource(tmp_path / "plugins", trust=trust, memory=memory)
            report = sync_on_start(registry, [source], memory=memory)
            marks = SqlFolderMarks(store).all()
            return Start(report, {p.id: p for p in registry.list()}, list(reads),
                         {Path(m).parent.name for m in marks})  # fmt: skip

    return run


@pytest.fixture
def root(tmp_path: Path) -> Path:
    plugins = tmp_path / "plugins"
    for plugin_id in ("alpha", "beta", "gamma"):
        add(plugins, plugin_id)
    return plugins


def test_a_second_start_reads_no_unchanged_folder(root: Path, start: Callable[..., Start]) -> None:
    first = start()
    assert sorted(first.read) == ["alpha", "beta", "gamma"]
    assert first.remembered == {"alpha", "beta", "gamma"}
    second = start()
    assert second.read == []
    assert sorted(second.report.unchanged) == ["alpha", "beta", "gamma"]
    assert sorted(second.report.loaded) == ["alpha", "beta", "gamma"]
    assert second.report.events == () and second.report.failures == ()
    assert second.plugins == first.plugins


def test_an_edited_manifest_is_read_again(root: Path, start: Callable[..., Start]) -> None:
    start()
    add(root, "beta", description="Beta, edited.")
    second = start()
    assert second.read == ["beta"]
    assert second.plugins["beta"].descriptor.description == "Beta, edited."
    assert [(e.kind, e.plugin_id) for e in second.report.events] == [("updated", "beta")]
    assert start().read == []


def test_edited_code_beside_an_unchanged_manifest_is_read_again(
    root: Path, start: Callable[..., Start]
) -> None:
    start()
    (root / "tool" / "gamma" / "plugin.py").write_text("def run() -> int:\n    return 1\n")
    assert start().read == ["gamma"]


def test_a_touched_file_is_read_again(root: Path, start: Callable[..., Start]) -> None:
    start()
    code = root / "tool" / "alpha" / "plugin.py"
    stat = code.stat()
    os.utime(code, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert start().read == ["alpha"]


def test_a_file_added_below_a_plugin_folder_is_read_again(
    root: Path, start: Callable[..., Start]
) -> None:
    start()
    vendor = root / "tool" / "beta" / "vendor" / "lib"
    vendor.mkdir(parents=True)
    (vendor / "__init__.py").write_text("")
    assert start().read == ["beta"]
    (vendor / "__init__.py").unlink()
    assert start().read == ["beta"]


def test_a_file_below_pycache_changes_nothing(root: Path, start: Callable[..., Start]) -> None:
    start()
    cache = root / "tool" / "beta" / "__pycache__"
    cache.mkdir()
    (cache / "plugin.cpython-311.pyc").write_bytes(b"\0")
    assert start().read == []


def test_a_removed_folder_is_unregistered_and_forgotten(
    root: Path, start: Callable[..., Start]
) -> None:
    start()
    for file in (root / "tool" / "gamma").iterdir():
        file.unlink()
    (root / "tool" / "gamma").rmdir()
    second = start()
    assert second.read == []
    assert second.report.removed == ("gamma",)
    assert "gamma" not in second.plugins
    assert second.remembered == {"alpha", "beta"}


def test_an_added_folder_is_read_and_registered(root: Path, start: Callable[..., Start]) -> None:
    start()
    add(root, "delta")
    second = start()
    assert second.read == ["delta"]
    assert "delta" in second.plugins
    assert second.remembered == {"alpha", "beta", "gamma", "delta"}


def test_a_broken_folder_is_read_and_reported_on_every_start(
    root: Path, start: Callable[..., Start]
) -> None:
    (root / "tool" / "beta" / "plugin.yaml").write_text("id: [unclosed\n")
    for _ in range(2):
        found = start()
        assert "beta" in found.read
        assert [Path(f.source).parent.name for f in found.report.failures] == ["beta"]
        assert "beta" not in found.remembered


def test_a_duplicate_id_is_reported_on_every_start(root: Path, start: Callable[..., Start]) -> None:
    copy = add(root, "zeta")
    (copy / "plugin.yaml").write_text(MANIFEST.format(id="alpha", description="Again."))
    for _ in range(2):
        found = start()
        assert [f.code for f in found.report.failures] == ["duplicate_plugin"]
        assert "zeta" in found.read
        assert found.plugins["alpha"].manifest_path == str(
            (root / "tool" / "alpha" / "plugin.yaml").resolve()
        )


def test_a_folder_written_in_the_last_seconds_is_not_remembered(
    root: Path, start: Callable[..., Start]
) -> None:
    first = start(clock=time.time_ns)  # the files were written just now
    assert first.remembered == set()
    assert len(start(clock=time.time_ns).read) == 3


def test_another_context_or_trust_reads_every_folder_again(
    root: Path, start: Callable[..., Start]
) -> None:
    start()
    assert len(start(context="another plugyard").read) == 3
    untrusted = start(context="another plugyard", trust="untrusted")
    assert len(untrusted.read) == 3
    assert {p.trust for p in untrusted.plugins.values()} == {"untrusted"}


def test_a_plugin_changed_in_the_registry_since_has_its_folder_read_again(
    root: Path, start: Callable[..., Start]
) -> None:
    start()

    def unregister_beta(registry: Registry) -> None:
        registry.unregister("beta")

    second = start(before=unregister_beta)
    assert second.read == ["beta"]
    assert "beta" in second.plugins


def test_a_folder_registered_since_by_another_process_is_read_again(
    root: Path, start: Callable[..., Start]
) -> None:
    start()

    def other_version(registry: Registry) -> None:
        held = registry.find("alpha")
        assert held is not None
        changed = held.descriptor.model_copy(update={"description": "Another version."})
        registry.register(held.redescribed(changed), replace=True)

    second = start(before=other_version)
    assert second.read == ["alpha"]
    assert second.plugins["alpha"].descriptor.description == "A plugin."


def test_an_unavailable_plugin_is_read_again_on_every_start(
    root: Path, start: Callable[..., Start]
) -> None:
    start()

    def mark_gamma(registry: Registry) -> None:
        registry.set_availability("gamma", False, "no runtime")

    assert start(before=mark_gamma).read == ["gamma"]


def test_a_remembered_row_it_cannot_read_only_has_its_folder_read_again(
    root: Path, start: Callable[..., Start], database_url: str
) -> None:
    start()
    with Store.open(database_url) as store, store.writing() as conn:
        conn.exec_driver_sql("UPDATE plugin_folders SET plugins = '[\"no pairs\"]'")
    assert len(start().read) == 3
    assert start().read == []
