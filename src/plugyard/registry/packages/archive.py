"""Safe extraction of a package zip into a folder the caller created.

``zipfile`` reads the central directory; everything after that is checked here rather
than trusted: each name (:mod:`.names`), the file type in the external attributes, the
entry count, the declared sizes against the caps and the compression ratio, that no two
entries' bytes overlap (the trick of zip bombs that reuse one compressed stream), and —
while the bytes stream out through our own inflater with a counter — that each entry is
exactly as long as it declared and matches its CRC. Only stored and deflated entries are
read. Files are created exclusively (never through a symlink) with fixed permissions.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from plugyard.errors import PackageError
from plugyard.registry.packages.names import NameSet, entry_parts

# Reasons (details.reason of package_invalid); docs/packages.md lists them.
NOT_A_ZIP = "not_a_zip"
SYMLINK = "symlink"
SPECIAL_FILE = "special_file"
TOO_MANY_ENTRIES = "too_many_entries"
TOO_LARGE = "too_large"
COMPRESSION_RATIO = "compression_ratio"
OVERLAPPING_ENTRIES = "overlapping_entries"
SIZE_MISMATCH = "size_mismatch"
CORRUPT = "corrupt"
ENCRYPTED = "encrypted"
UNSUPPORTED_COMPRESSION = "unsupported_compression"

_CHUNK = 64 * 1024
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps on one package. The ratio cap applies to entries above ``ratio_floor_bytes``
    (a small file of zeros compresses a thousandfold and harms no one)."""

    max_archive_bytes: int = 32 * 1024 * 1024
    max_entries: int = 2_000
    max_total_bytes: int = 128 * 1024 * 1024
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 64 * 1024


@dataclass(frozen=True, slots=True)
class Extracted:
    files: tuple[str, ...]
    total_bytes: int


def extract(archive: bytes | Path, target: Path, limits: Limits | None = None) -> Extracted:
    """Unpack ``archive`` into the empty folder ``target``; ``package_invalid`` with a
    ``reason`` otherwise. On refusal, ``target`` may hold partial files: the caller owns
    it and removes it (the installer extracts into a staging folder for that reason)."""
    limits = limits or Limits()
    size = len(archive) if isinstance(archive, bytes) else archive.stat().st_size
    if size > limits.max_archive_bytes:
        raise PackageError(
            f"the zip is {size} bytes; the cap is {limits.max_archive_bytes}", reason=TOO_LARGE
        )
    with _open(archive) as raw:
        try:
            zf = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            raise PackageError(f"not a zip archive: {exc}", reason=NOT_A_ZIP) from None
        with zf:
            entries = _checked_entries(zf, raw, limits)
            root = os.path.realpath(target)
            written: list[str] = []
            total = 0
            for info, parts, is_dir, start in entries:
                path = os.path.join(root, *parts)
                if not os.path.realpath(path).startswith(root + os.sep):
                    raise PackageError(f"{info.orig_filename!r} escapes", reason="unsafe_path")
                if is_dir:
                    os.makedirs(path, mode=0o755, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                total += _write(raw, info, start, path)
                written.append("/".join(parts))
    return Extracted(tuple(written), total)


_Entry = tuple[zipfile.ZipInfo, tuple[str, ...], bool, int]


def _checked_entries(zf: zipfile.ZipFile, raw: BinaryIO, limits: Limits) -> list[_Entry]:
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise PackageError(
            f"{len(infos)} entries; the cap is {limits.max_entries}", reason=TOO_MANY_ENTRIES
        )
    names = NameSet()
    declared = 0
    entries: list[_Entry] = []
    for info in infos:
        parts, is_dir = entry_parts(info.orig_filename)
        _check_type(info, is_dir)
        names.add(parts, is_dir)
        if info.flag_bits & 0x1:
            raise PackageError(f"{info.orig_filename!r} is encrypted", reason=ENCRYPTED)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise PackageError(
                f"{info.orig_filename!r} uses compression method {info.compress_type}; "
                "only stored and deflated are read",
                reason=UNSUPPORTED_COMPRESSION,
            )
        declared += info.file_size
        if declared > limits.max_total_bytes:
            raise PackageError(
                f"the entries declare more than {limits.max_total_bytes} bytes", reason=TOO_LARGE
            )
        if info.file_size > limits.ratio_floor_bytes and (
            info.file_size > limits.max_ratio * max(info.compress_size, 1)
        ):
            raise PackageError(
                f"{info.orig_filename!r} expands {info.file_size} bytes from {info.compress_size}",
                reason=COMPRESSION_RATIO,
            )
        entries.append((info, parts, is_dir, _data_start(raw, info)))
    _check_overlaps(entries, zf.start_dir)
    return entries


def _check_type(info: zipfile.ZipInfo, is_dir: bool) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.create_system != 3 or kind == 0:  # not from Unix, or no type: a plain entry
        return
    if kind == stat.S_IFLNK:
        raise PackageError(f"{info.orig_filename!r} is a symlink", reason=SYMLINK)
    if kind not in (stat.S_IFREG, stat.S_IFDIR) or (kind == stat.S_IFDIR) != is_dir:
        raise PackageError(
            f"{info.orig_filename!r} is not a regular file or folder", reason=SPECIAL_FILE
        )


def _data_start(raw: BinaryIO, info: zipfile.ZipInfo) -> int:
    raw.seek(info.header_offset)
    header = raw.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise PackageError(f"{info.orig_filename!r} has no local header", reason=CORRUPT)
    fields = _LOCAL_HEADER.unpack(header)
    name_length, extra_length = fields[-2], fields[-1]
    return int(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)


def _check_overlaps(entries: list[_Entry], central_directory: int) -> None:
    """Each entry's local header and data own their bytes, before the central directory."""
    spans = sorted(
        ((info.header_offset, start + info.compress_size, info) for info, _, _, start in entries),
        key=lambda span: (span[0], span[1]),
    )
    end = 0
    for begin, stop, info in spans:
        if begin < end or stop > central_directory:
            raise PackageError(
                f"{info.orig_filename!r} shares bytes with another entry or the directory",
                reason=OVERLAPPING_ENTRIES,
            )
        end = stop


def _write(raw: BinaryIO, info: zipfile.ZipInfo, start: int, path: str) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    produced = 0
    crc = 0
    with os.fdopen(fd, "wb") as out:
        for chunk in _inflate(raw, info, start):
            produced += len(chunk)
            if produced > info.file_size:
                raise PackageError(
                    f"{info.orig_filename!r} is longer than the {info.file_size} bytes it declares",
                    reason=SIZE_MISMATCH,
                )
            crc = zlib.crc32(chunk, crc)
            out.write(chunk)
    if produced != info.file_size:
        raise PackageError(
            f"{info.orig_filename!r} holds {produced} bytes, not the {info.file_size} it declares",
            reason=SIZE_MISMATCH,
        )
    if crc != info.CRC:
        raise PackageError(f"{info.orig_filename!r} fails its CRC", reason=CORRUPT)
    return produced


def _inflate(raw: BinaryIO, info: zipfile.ZipInfo, start: int) -> Iterator[bytes]:
    """The entry's bytes in bounded chunks: no single step makes more than ``_CHUNK``."""
    raw.seek(start)
    left = info.compress_size
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) if info.compress_type else None
    while left > 0:
        data = raw.read(min(_CHUNK, left))
        if not data:
            raise PackageError(f"{info.orig_filename!r} is cut short", reason=CORRUPT)
        left -= len(data)
        if inflater is None:
            yield data
            continue
        try:
            out = inflater.decompress(data, _CHUNK)
            yield out
            while inflater.unconsumed_tail:
                yield inflater.decompress(inflater.unconsumed_tail, _CHUNK)
        except zlib.error as exc:
            raise PackageError(f"{info.orig_filename!r}: {exc}", reason=CORRUPT) from None
    if inflater is not None:
        try:
            tail = inflater.flush()
        except zlib.error as exc:
            raise PackageError(f"{info.orig_filename!r}: {exc}", reason=CORRUPT) from None
        if tail:
            yield tail
        if not inflater.eof:
            raise PackageError(f"{info.orig_filename!r} is cut short", reason=CORRUPT)


def _open(archive: bytes | Path) -> BinaryIO:
    if isinstance(archive, bytes):
        return io.BytesIO(archive)
    return open(archive, "rb")  # closed by the caller's ``with``
