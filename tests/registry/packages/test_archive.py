"""Safe extraction: every refusal has its reason, and nothing lands outside the target."""

from __future__ import annotations

import io
import os
import warnings
import zipfile
from pathlib import Path

import pytest

from plugyard.errors import PackageError
from plugyard.registry.packages.archive import Limits, extract

from .zips import (
    COMPRESSED,
    CRC,
    FLAGS,
    LOCAL_OFFSET,
    UNCOMPRESSED,
    build,
    field,
    patch,
    shu_files,
    symlink_info,
    with_entry,
)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    folder = tmp_path / "root" / "target"
    folder.mkdir(parents=True)
    return folder


def refused(data: bytes | Path, target: Path, limits: Limits | None = None) -> str:
    with pytest.raises(PackageError) as caught:
        extract(data, target, limits)
    assert caught.value.code == "package_invalid"
    # Nothing outside the target, whatever happened inside it.
    assert sorted(p.name for p in target.parent.parent.iterdir()) == ["root"]
    assert [p.name for p in target.parent.iterdir()] == ["target"]
    return str(caught.value.reason)


def test_a_package_is_extracted_with_its_folders_and_bytes(target: Path) -> None:
    files = shu_files(**{"vendor/dep/__init__.py": "VALUE = 1\n"})
    done = extract(build(files), target)
    assert sorted(done.files) == sorted(files)
    assert (target / "greeter_pkg" / "plugin.py").read_text() == files["greeter_pkg/plugin.py"]
    assert (target / "vendor" / "dep" / "__init__.py").read_text() == "VALUE = 1\n"
    assert done.total_bytes == sum(len(v.encode()) for v in files.values())


def test_a_zip_on_disk_is_read_like_bytes(target: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.zip"
    path.write_bytes(build(shu_files()))
    assert "manifest.yaml" in extract(path, target).files


def test_stored_entries_are_read(target: Path) -> None:
    extract(build(shu_files(), method=zipfile.ZIP_STORED), target)
    assert (target / "manifest.yaml").is_file()


def test_permissions_in_the_zip_are_not_applied(target: Path) -> None:
    info = zipfile.ZipInfo("run.sh")
    info.create_system = 3
    info.external_attr = (0o100000 | 0o4777) << 16  # setuid, world-writable
    extract(with_entry(info, b"echo hi"), target)
    assert (target / "run.sh").stat().st_mode & 0o7777 == 0o644


@pytest.mark.parametrize(
    "name",
    ["../evil.py", "a/../../evil.py", "/etc/evil.py", "C:/evil.py", "c:evil.py", "a\\..\\evil.py",
     "a/./b.py", "a//b.py", "trailing. ", "ads.py:stream", "ctl\x07.py"],
)  # fmt: skip
def test_unsafe_names_are_refused(target: Path, name: str) -> None:
    data = with_entry(zipfile.ZipInfo(name))
    assert refused(data, target) == "unsafe_path"


def test_a_name_with_a_nul_byte_is_refused(target: Path) -> None:
    # zipfile cuts names at NUL when it writes them: plant the byte afterwards.
    data = with_entry(zipfile.ZipInfo("evil.py#.txt")).replace(b"evil.py#.txt", b"evil.py\0.txt")
    assert refused(data, target) == "unsafe_path"


def test_a_symlink_entry_is_refused(target: Path) -> None:
    assert refused(with_entry(symlink_info("link"), b"/etc/passwd"), target) == "symlink"


def test_a_device_or_fifo_entry_is_refused(target: Path) -> None:
    info = zipfile.ZipInfo("fifo")
    info.create_system = 3
    info.external_attr = (0o010000 | 0o644) << 16
    assert refused(with_entry(info), target) == "special_file"


def test_a_repeated_name_is_refused(target: Path) -> None:
    base = build(shu_files())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate it writes
        data = with_entry(zipfile.ZipInfo("manifest.yaml"), b"name: other\n", base=base)
    assert refused(data, target) == "duplicate_name"


def test_a_file_where_a_folder_is_is_refused(target: Path) -> None:
    data = with_entry(zipfile.ZipInfo("greeter_pkg"), b"shadow")
    assert refused(data, target) == "duplicate_name"


@pytest.mark.parametrize("name", ["MANIFEST.yaml", "Greeter_Pkg/util.py", "greeter_pkg/PLUGIN.py"])
def test_names_differing_only_in_case_are_refused(target: Path, name: str) -> None:
    assert refused(with_entry(zipfile.ZipInfo(name)), target) == "case_collision"


def test_names_differing_only_in_unicode_form_are_refused(target: Path) -> None:
    data = build({"caf\u00e9.py": "", "cafe\u0301.py": ""})
    assert refused(data, target) == "case_collision"


def test_too_many_entries_are_refused(target: Path) -> None:
    data = build({f"m{i}.py": "" for i in range(6)})
    assert refused(data, target, Limits(max_entries=5)) == "too_many_entries"


def test_a_total_size_over_the_cap_is_refused(target: Path) -> None:
    data = build({"a.txt": "x" * 600, "b.txt": "y" * 600})
    assert refused(data, target, Limits(max_total_bytes=1000)) == "too_large"


def test_an_archive_over_the_cap_is_refused_before_it_is_read(target: Path) -> None:
    assert refused(b"\0" * 2048, target, Limits(max_archive_bytes=1024)) == "too_large"


def test_an_extreme_compression_ratio_is_refused(target: Path) -> None:
    data = build({"zeros.bin": b"\0" * (4 * 1024 * 1024)})
    assert len(data) < 20_000
    assert refused(data, target) == "compression_ratio"


def test_a_small_highly_compressible_file_is_fine(target: Path) -> None:
    extract(build({"zeros.bin": b"\0" * 32_000}), target)
    assert (target / "zeros.bin").stat().st_size == 32_000


def test_entries_sharing_one_local_header_are_refused(target: Path) -> None:
    data = build({"a.txt": "same", "b.txt": "same"})
    first = field(data, 0, LOCAL_OFFSET)
    assert refused(patch(data, 1, LOCAL_OFFSET, first), target) == "overlapping_entries"


def test_an_entry_whose_data_runs_into_the_next_is_refused(target: Path) -> None:
    data = build({"a.txt": "a" * 100, "b.txt": "b" * 100}, method=zipfile.ZIP_STORED)
    grown = patch(data, 0, COMPRESSED, field(data, 0, COMPRESSED) + 40)
    assert refused(grown, target) == "overlapping_entries"


def test_an_entry_longer_than_declared_is_refused_while_streaming(target: Path) -> None:
    data = build({"a.txt": "a" * 5000})
    assert refused(patch(data, 0, UNCOMPRESSED, 100), target) == "size_mismatch"
    assert not (target / "a.txt").exists() or (target / "a.txt").stat().st_size <= 100


def test_an_entry_shorter_than_declared_is_refused(target: Path) -> None:
    data = build({"a.txt": "a" * 5000})
    assert refused(patch(data, 0, UNCOMPRESSED, 6000), target) == "size_mismatch"


def test_a_stored_entry_with_a_lying_size_is_refused(target: Path) -> None:
    data = build({"a.txt": "a" * 500}, method=zipfile.ZIP_STORED)
    assert refused(patch(data, 0, UNCOMPRESSED, 400), target) == "size_mismatch"


def test_a_bad_crc_is_refused(target: Path) -> None:
    data = build({"a.txt": "abc"})
    assert refused(patch(data, 0, CRC, field(data, 0, CRC) ^ 1), target) == "corrupt"


def test_an_encrypted_entry_is_refused(target: Path) -> None:
    data = build({"a.txt": "abc"})
    flags = field(data, 0, FLAGS) & 0xFFFF
    assert refused(patch(data, 0, FLAGS, flags | 1, size=2), target) == "encrypted"


def test_other_compression_methods_are_refused(target: Path) -> None:
    data = build({"a.txt": "abc" * 100}, method=zipfile.ZIP_BZIP2)
    assert refused(data, target) == "unsupported_compression"


def test_bytes_that_are_not_a_zip_are_refused(target: Path) -> None:
    assert refused(b"this is not a zip at all", target) == "not_a_zip"


def test_a_symlink_planted_in_the_target_is_not_followed(target: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    os.symlink(outside, target / "a.txt")
    with pytest.raises(PackageError) as caught:
        extract(build({"a.txt": "overwrite"}), target)
    assert caught.value.reason == "unsafe_path"
    assert outside.read_text() == "keep"


def test_bytes_prepended_to_the_zip_do_not_confuse_the_offsets(target: Path) -> None:
    data = b"#!/bin/sh\nexit 0\n" + build(shu_files())
    extract(io.BytesIO(data).getvalue(), target)
    assert (target / "greeter_pkg" / "plugin.py").is_file()
