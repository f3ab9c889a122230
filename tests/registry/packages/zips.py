"""Package zips built in tests: well-formed ones, and ones edited byte by byte to lie."""

from __future__ import annotations

import io
import stat
import struct
import textwrap
import zipfile

CENTRAL = b"PK\x01\x02"
# Offsets inside a central directory header (APPNOTE 4.3.12).
FLAGS, CRC, COMPRESSED, UNCOMPRESSED, LOCAL_OFFSET = 8, 16, 20, 24, 42

SHU_MANIFEST = """
name: greeter
version: 1.0.0
description: Says hello to someone by name.
entrypoints:
  greeter: greeter_pkg.plugin:Plugin
"""
SHU_PLUGIN = """
class Plugin:
    async def execute(self, params, context, host):
        return {"status": "success", "data": {"greeting": "hello " + params.get("name", "you")}}
"""


def shu_files(**extra: str) -> dict[str, str]:
    files = {
        "manifest.yaml": SHU_MANIFEST,
        "greeter_pkg/__init__.py": "",
        "greeter_pkg/plugin.py": SHU_PLUGIN,
    }
    files.update(extra)
    return {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}


def build(files: dict[str, str | bytes], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as zf:
        for name, content in files.items():
            zf.writestr(zipfile.ZipInfo(name), content, compress_type=method)
    return buffer.getvalue()


def with_entry(info: zipfile.ZipInfo, content: bytes = b"x", base: bytes | None = None) -> bytes:
    """A zip holding the Shu files and one more entry described by ``info``."""
    buffer = io.BytesIO(base or b"")
    with zipfile.ZipFile(buffer, "a" if base else "w") as zf:
        if base is None:
            for name, text in shu_files().items():
                zf.writestr(name, text)
        zf.writestr(info, content)
    return buffer.getvalue()


def symlink_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def central_headers(data: bytes) -> list[int]:
    """The offsets of each central directory header, in order."""
    found, at = [], data.find(CENTRAL)
    while at != -1:
        found.append(at)
        at = data.find(CENTRAL, at + 4)
    return found


def patch(data: bytes, entry: int, field: int, value: int, size: int = 4) -> bytes:
    """``data`` with one little-endian field of the ``entry``-th central header replaced."""
    at = central_headers(data)[entry] + field
    packed = struct.pack("<I" if size == 4 else "<H", value)
    return data[:at] + packed + data[at + size :]


def field(data: bytes, entry: int, field: int) -> int:
    at = central_headers(data)[entry] + field
    return int(struct.unpack("<I", data[at : at + 4])[0])
