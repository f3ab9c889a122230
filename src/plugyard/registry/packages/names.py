"""Which names a package zip may hold, and when two names are one file.

A name is refused when it could land outside the target folder on any platform plugyard
or an operator's tools might unpack it on: absolute paths, ``..``, drive letters and
backslashes (a Windows separator), colons (NTFS streams), control characters. Two names
collide when they are the same path after Unicode normalisation and case folding — on a
case-insensitive file system one would silently overwrite the other.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from plugyard.errors import PackageError

MAX_NAME_CHARS = 1024
MAX_PART_BYTES = 255
MAX_DEPTH = 32

UNSAFE_PATH = "unsafe_path"
DUPLICATE_NAME = "duplicate_name"
CASE_COLLISION = "case_collision"


def entry_parts(name: str) -> tuple[tuple[str, ...], bool]:
    """``(parts, is_directory)`` of a zip entry name, or ``package_invalid``
    (``unsafe_path``)."""
    if not name or len(name) > MAX_NAME_CHARS:
        raise _unsafe(name, "empty or too long")
    if "\\" in name:
        raise _unsafe(name, "backslash")
    if ":" in name:
        raise _unsafe(name, "colon (drive letter or stream)")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise _unsafe(name, "control character")
    if name.startswith("/"):
        raise _unsafe(name, "absolute path")
    is_dir = name.endswith("/")
    parts = tuple(name[:-1].split("/") if is_dir else name.split("/"))
    if len(parts) > MAX_DEPTH:
        raise _unsafe(name, "too deep")
    for part in parts:
        if part in {"", ".", ".."}:
            raise _unsafe(name, f"path part {part!r}")
        if len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES:
            raise _unsafe(name, "path part too long")
        if part != part.strip() or part.endswith("."):
            # Windows drops trailing dots and spaces: "a." and "a" would be one file.
            raise _unsafe(name, "leading or trailing space or trailing dot")
    return parts, is_dir


def fold(parts: Iterable[str]) -> str:
    """The key two names share when they are one file on a case-insensitive disk."""
    return "/".join(unicodedata.normalize("NFC", p).casefold() for p in parts)


class NameSet:
    """The paths of an archive so far; :meth:`add` refuses duplicates (also a file where
    a folder is, or the reverse) and case collisions."""

    def __init__(self) -> None:
        self._files: set[tuple[str, ...]] = set()
        self._dirs: set[tuple[str, ...]] = set()
        self._folded: dict[str, tuple[str, ...]] = {}

    def add(self, parts: tuple[str, ...], is_dir: bool) -> None:
        for depth in range(1, len(parts)):
            self._add_dir(parts[:depth])
        if is_dir:
            self._add_dir(parts)
            return
        if parts in self._files or parts in self._dirs:
            raise PackageError(f"the zip holds {'/'.join(parts)!r} twice", reason=DUPLICATE_NAME)
        self._claim(parts)
        self._files.add(parts)

    def _add_dir(self, parts: tuple[str, ...]) -> None:
        if parts in self._dirs:
            return
        if parts in self._files:
            raise PackageError(
                f"{'/'.join(parts)!r} is both a file and a folder", reason=DUPLICATE_NAME
            )
        self._claim(parts)
        self._dirs.add(parts)

    def _claim(self, parts: tuple[str, ...]) -> None:
        key = fold(parts)
        held = self._folded.setdefault(key, parts)
        if held != parts:
            raise PackageError(
                f"{'/'.join(parts)!r} and {'/'.join(held)!r} differ only in case or Unicode form",
                reason=CASE_COLLISION,
            )


def _unsafe(name: str, why: str) -> PackageError:
    return PackageError(f"unsafe entry name {name[:200]!r}: {why}", reason=UNSAFE_PATH)
