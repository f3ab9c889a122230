"""Installing under the packages root: all or nothing, trust from the operator only."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from plugyard.errors import PackageError
from plugyard.registry.packages import Installer, Limits
from plugyard.runtimes.python.guard import scan_folder

from .zips import build, shu_files, symlink_info, with_entry


@pytest.fixture
def installer(tmp_path: Path) -> Installer:
    return Installer(tmp_path / "packages", scan=scan_folder)


def leftovers(installer: Installer) -> list[str]:
    """What is under the root, but for the lock file swaps share (it stays by design)."""
    if not installer.root.exists():
        return []
    return sorted(p.name for p in installer.root.iterdir() if p.name != ".lock")


def test_a_package_is_installed_untrusted_with_its_record(installer: Installer) -> None:
    data = build(shu_files(**{"vendor/dep/__init__.py": "X = 1\n"}))
    package = installer.install(data)
    assert package.name == "greeter"
    assert package.trust == "untrusted"
    assert package.plugins == ("greeter",)
    assert package.vendor is True
    assert (package.files / "greeter_pkg" / "plugin.py").is_file()
    record = json.loads((package.folder / "install.json").read_text())
    assert record["trust"] == "untrusted"
    assert len(record["sha256"]) == 64
    assert leftovers(installer) == ["greeter"]
    assert [p.name for p in installer.installed()] == ["greeter"]


def test_trust_is_the_operators_and_never_the_zips(installer: Installer) -> None:
    forged = json.dumps({"name": "greeter", "trust": "trusted"})
    package = installer.install(build(shu_files(**{"install.json": forged})))
    assert package.trust == "untrusted"
    assert installer.get("greeter").trust == "untrusted"
    assert installer.install(build(shu_files()), trust="trusted").trust == "trusted"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (with_entry(zipfile.ZipInfo("../escape.py")), "unsafe_path"),
        (with_entry(symlink_info("greeter_pkg/link.py"), b"/etc/passwd"), "symlink"),
        (build({"greeter_pkg/plugin.py": "x = 1\n"}), "no_manifest"),
        (build({"manifest.yaml": "name: [unclosed\n"}), "manifest_invalid"),
        (b"PK\x03\x04 not really", "not_a_zip"),
    ],
)
def test_a_refused_package_leaves_nothing_behind(
    installer: Installer, data: bytes, reason: str
) -> None:
    with pytest.raises(PackageError) as caught:
        installer.install(data)
    assert (caught.value.code, caught.value.reason) == ("package_invalid", reason)
    assert leftovers(installer) == []
    assert not (installer.root.parent / "escape.py").exists()


def test_a_failed_upgrade_keeps_the_installed_version(installer: Installer) -> None:
    installer.install(build(shu_files()))
    with pytest.raises(PackageError):
        installer.install(with_entry(zipfile.ZipInfo("a/../../x.py")))
    assert leftovers(installer) == ["greeter"]
    assert installer.get("greeter").plugins == ("greeter",)


def test_an_upgrade_replaces_the_files(installer: Installer) -> None:
    installer.install(build(shu_files(**{"old.txt": "old"})))
    package = installer.install(build(shu_files(**{"new.txt": "new"})))
    assert (package.files / "new.txt").is_file()
    assert not (package.files / "old.txt").exists()
    assert leftovers(installer) == ["greeter"]


def test_limits_apply_to_installation(tmp_path: Path) -> None:
    installer = Installer(tmp_path / "p", limits=Limits(max_entries=2))
    with pytest.raises(PackageError) as caught:
        installer.install(build(shu_files()))
    assert caught.value.reason == "too_many_entries"


def test_an_untrusted_package_with_findings_is_refused(installer: Installer) -> None:
    data = build(shu_files(**{"greeter_pkg/net.py": "import json\nimport requests\n"}))
    with pytest.raises(PackageError) as caught:
        installer.install(data)
    assert caught.value.code == "package_refused"
    assert caught.value.findings == (
        {"path": "greeter_pkg/net.py", "line": 2, "rule": "http_client", "name": "requests"},
    )
    assert caught.value.details["findings"][0]["rule"] == "http_client"
    assert leftovers(installer) == []


def test_the_operator_may_override_the_guard(installer: Installer) -> None:
    data = build(shu_files(**{"greeter_pkg/net.py": "import subprocess\n"}))
    package = installer.install(data, allow_findings=True)
    assert package.guard_overridden is True
    assert [f["rule"] for f in package.findings] == ["process"]


def test_a_trusted_package_gets_findings_as_warnings(installer: Installer) -> None:
    data = build(shu_files(**{"greeter_pkg/net.py": "import socket\n"}))
    package = installer.install(data, trust="trusted")
    assert package.guard_overridden is False
    assert [f["rule"] for f in package.findings] == ["http_client"]


def test_a_package_name_that_is_not_a_folder_name_is_refused(installer: Installer) -> None:
    with pytest.raises(PackageError) as caught:
        installer.install(build(shu_files()), name="../up")
    assert caught.value.reason == "bad_name"
    assert leftovers(installer) == []


def test_remove_deletes_the_folder(installer: Installer) -> None:
    installer.install(build(shu_files()))
    assert installer.remove("greeter").name == "greeter"
    assert leftovers(installer) == []
    with pytest.raises(PackageError) as caught:
        installer.remove("greeter")
    assert caught.value.code == "package_not_found"


def test_a_folder_without_a_record_is_not_a_package(installer: Installer) -> None:
    (installer.root / "stray").mkdir(parents=True)
    assert installer.installed() == []
    with pytest.raises(PackageError):
        installer.get("stray")


def test_a_shu_manifest_py_is_read_without_running_it(installer: Installer, tmp_path: Path) -> None:
    canary = tmp_path / "manifest-ran"
    manifest = (
        f"import pathlib; pathlib.Path({str(canary)!r}).touch()\n"
        "PLUGIN_MANIFEST = {'name': 'greeter', 'version': '1.0.0',\n"
        "    'entrypoints': {'greeter': 'greeter_pkg.plugin:Plugin'}}\n"
    )
    files = shu_files()
    del files["manifest.yaml"]
    package = installer.install(build({**files, "manifest.py": manifest}))
    assert package.plugins == ("greeter",)
    assert not canary.exists()


def test_an_archive_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    archive = tmp_path / "big.zip"
    archive.write_bytes(build(shu_files()) + b"\0" * 4096)
    installer = Installer(tmp_path / "p", limits=Limits(max_archive_bytes=1024))
    with pytest.raises(PackageError) as caught:
        installer.install(archive)
    assert caught.value.reason == "too_large"
    assert leftovers(installer) == []


def test_a_zip_in_shus_installer_layout_installs(installer: Installer) -> None:
    # Shu's installer takes the plugin inside one top-level folder (a zipped plugin folder).
    wrapped = {f"greeter/{name}": text for name, text in shu_files().items()}
    package = installer.install(build(wrapped))
    assert package.plugins == ("greeter",)
    assert (package.files / "manifest.yaml").is_file()
    assert (package.files / "greeter_pkg" / "plugin.py").is_file()
    assert leftovers(installer) == ["greeter"]


def test_a_top_folder_beside_other_files_is_not_lifted(installer: Installer) -> None:
    wrapped = {f"greeter/{name}": text for name, text in shu_files().items()}
    with pytest.raises(PackageError) as caught:
        installer.install(build({**wrapped, "README.md": "hi\n"}))
    assert (caught.value.code, caught.value.reason) == ("package_invalid", "no_manifest")
    assert leftovers(installer) == []
