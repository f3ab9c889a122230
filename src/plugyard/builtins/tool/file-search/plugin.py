"""File search inside one configured folder (HomeClaw style).

Every path is resolved, symbolic links included, and must stay inside the folder: a
``../`` path or a link pointing outside is refused when named, and skipped while walking
(the walk never follows linked folders). Patterns are globs relative to the folder;
``**`` crosses folders, and a pattern without a ``/`` matches file names at any depth.
Work is capped: files scanned, bytes read per file, results.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

ROOT_ENV = "PLUGYARD_FILES_ROOT"
DEFAULT_ROOT = Path.home() / ".local" / "share" / "plugyard" / "files"
MAX_RESULTS = 500
MAX_MATCHES_PER_FILE = 20
MAX_LINE = 240
MAX_READ_LINES = 2_000


class InvalidInput(ValueError):
    code = "invalid_parameters"


class OutsideFolder(PermissionError):
    code = "permission_denied"


class LineMatch(TypedDict):
    line: int
    text: str


class FileFound(TypedDict):
    path: str
    bytes: int
    matches: list[LineMatch]


class SearchResult(TypedDict):
    files: list[FileFound]
    truncated: bool
    scanned: int
    skipped: int


class FileLines(TypedDict):
    path: str
    start_line: int
    lines: list[str]
    total_lines: int
    more: bool


class Entry(TypedDict):
    name: str
    kind: str
    bytes: int | None


class FolderListing(TypedDict):
    path: str
    entries: list[Entry]


def search(
    pattern: str = "**/*",
    contains: str | None = None,
    regex: bool = False,
    case_sensitive: bool = False,
    max_results: int = 50,
    config: dict[str, Any] | None = None,
) -> SearchResult:
    settings = config or {}
    root = _root(settings)
    matcher = _glob(pattern)
    by_name = "/" not in pattern.strip()
    needle = _needle(contains, regex, case_sensitive) if contains else None
    limit = min(max(1, max_results), MAX_RESULTS)
    max_bytes = int(settings.get("max_file_bytes", 1_000_000))
    max_files = int(settings.get("max_files_scanned", 20_000))
    found: list[FileFound] = []
    scanned = skipped = 0
    truncated = False
    for path, relative in _walk(root):
        if scanned >= max_files:
            truncated = True
            break
        scanned += 1
        if not matcher.fullmatch(relative.rsplit("/", 1)[-1] if by_name else relative):
            continue
        if not _inside(root, path) or not path.is_file():
            skipped += 1  # a link that points outside the folder, or nowhere
            continue
        size = path.stat().st_size
        matches: list[LineMatch] = []
        if needle is not None:
            if size > max_bytes:
                skipped += 1
                continue
            matches = _grep(path, needle)
            if not matches:
                continue
        if len(found) == limit:
            truncated = True
            break
        found.append({"path": relative, "bytes": size, "matches": matches})
    return {"files": found, "truncated": truncated, "scanned": scanned, "skipped": skipped}


def read_file(
    path: str, start_line: int = 1, max_lines: int = 200, config: dict[str, Any] | None = None
) -> FileLines:
    settings = config or {}
    root = _root(settings)
    target = _resolve(root, path)
    if not target.is_file():
        raise InvalidInput(f"no file {path!r} in the folder")
    if target.stat().st_size > int(settings.get("max_file_bytes", 1_000_000)):
        raise InvalidInput(f"{path!r} is larger than this plugin reads")
    text = _text(target)
    if text is None:
        raise InvalidInput(f"{path!r} is not a text file")
    lines = text.splitlines()
    first = max(1, start_line)
    count = min(max(1, max_lines), MAX_READ_LINES)
    chosen = lines[first - 1 : first - 1 + count]
    return {
        "path": target.relative_to(root).as_posix(),
        "start_line": first,
        "lines": chosen,
        "total_lines": len(lines),
        "more": first - 1 + count < len(lines),
    }


def list_folder(path: str = ".", config: dict[str, Any] | None = None) -> FolderListing:
    root = _root(config or {})
    folder = _resolve(root, path)
    if not folder.is_dir():
        raise InvalidInput(f"no folder {path!r}")
    entries: list[Entry] = []
    for child in sorted(folder.iterdir(), key=lambda p: p.name):
        if not _inside(root, child):
            continue
        kind = "folder" if child.is_dir() else "file"
        size = child.stat().st_size if kind == "file" else None
        entries.append({"name": child.name, "kind": kind, "bytes": size})
    return {"path": folder.relative_to(root).as_posix(), "entries": entries}


# ------------------------------------------------------------------------------ safety


def _root(settings: dict[str, Any]) -> Path:
    configured = os.environ.get(ROOT_ENV) or settings.get("root")
    return Path(configured).expanduser().resolve() if configured else DEFAULT_ROOT.resolve()


def _inside(root: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(root)


def _resolve(root: Path, relative: str) -> Path:
    if "\x00" in relative:
        raise InvalidInput("a path cannot contain NUL")
    target = (root / relative).resolve()
    if not target.is_relative_to(root):
        raise OutsideFolder(f"{relative!r} is outside the configured folder")
    return target


def _walk(root: Path) -> Any:
    """Files under ``root`` with their relative POSIX paths; linked folders not followed."""
    for folder, folders, files in os.walk(root, followlinks=False):
        folders.sort()
        base = Path(folder)
        for name in sorted(files):
            path = base / name
            yield path, path.relative_to(root).as_posix()


def _glob(pattern: str) -> re.Pattern[str]:
    text = pattern.strip() or "**/*"
    if text.startswith("/") or ".." in Path(text).parts:
        raise OutsideFolder("patterns are relative to the folder and cannot climb out of it")
    out, i = [], 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _needle(contains: str, regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(contains if regex else re.escape(contains), flags)
    except re.error as exc:
        raise InvalidInput(f"not a regular expression: {exc}") from None


def _grep(path: Path, needle: re.Pattern[str]) -> list[LineMatch]:
    text = _text(path)
    if text is None:
        return []
    found: list[LineMatch] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if needle.search(line):
            found.append({"line": number, "text": line[:MAX_LINE]})
            if len(found) == MAX_MATCHES_PER_FILE:
                break
    return found


def _text(path: Path) -> str | None:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        return None  # binary
    return raw.decode("utf-8", errors="replace")
