"""Key material kept outside the database: the audit chain's HMAC key and the secrets
master key.

Each comes, in this order, from an environment variable holding the key (base64 or hex
of at least 32 bytes), an environment variable naming a key file, or — the embedded
default — a key file beside the database, created on first run with a warning (back it
up: without it the audit chain cannot be verified and the secrets cannot be read). An
in-memory database gets a random key for the life of the process. Replicas of one
PostgreSQL store must share their keys through the environment or a shared file.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from plugyard.errors import GovernanceError

log = logging.getLogger("plugyard.governance")
KEY_BYTES = 32


@dataclass(frozen=True, slots=True)
class KeySpec:
    """Where one key is looked for."""

    purpose: str  # "audit" or "secrets"
    env: str  # e.g. PLUGYARD_AUDIT_KEY
    file_env: str  # e.g. PLUGYARD_AUDIT_KEY_FILE
    file_name: str  # e.g. audit.key
    error_code: str


AUDIT_KEY = KeySpec(
    "audit", "PLUGYARD_AUDIT_KEY", "PLUGYARD_AUDIT_KEY_FILE", "audit.key", "audit_key_error"
)
SECRETS_KEY = KeySpec(
    "secrets",
    "PLUGYARD_SECRETS_KEY",
    "PLUGYARD_SECRETS_KEY_FILE",
    "secrets.key",
    "secrets_key_error",
)


def key_id(key: bytes) -> str:
    """A short, non-secret name of a key (stored beside what it protects)."""
    return hashlib.sha256(b"plugyard-key-id\x00" + key).hexdigest()[:12]


def load_key(spec: KeySpec, folder: Path | None, environ: Mapping[str, str] | None = None) -> bytes:
    """The key for ``spec``; ``folder`` is where the embedded default keeps its file
    (``None``: an in-memory store, whose key lives as long as the process)."""
    env = os.environ if environ is None else environ
    given = env.get(spec.env)
    if given:
        return _decode(given.strip(), spec, f"${spec.env}")
    named = env.get(spec.file_env)
    if named:
        return _read(Path(named), spec)
    if folder is None:
        return secrets.token_bytes(KEY_BYTES)
    path = folder / spec.file_name
    if path.exists():
        return _read(path, spec)
    return _create(path, spec)


def _read(path: Path, spec: KeySpec) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise GovernanceError(
            f"cannot read the {spec.purpose} key file {path}: {exc}", code=spec.error_code
        ) from None
    return _decode(text, spec, str(path))


def _decode(text: str, spec: KeySpec, where: str) -> bytes:
    key: bytes | None = None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        try:
            key = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            key = None
    if key is None or len(key) < KEY_BYTES:
        raise GovernanceError(
            f"the {spec.purpose} key in {where} is not base64 or hex of {KEY_BYTES}+ bytes",
            code=spec.error_code,
        )
    return key


def _create(path: Path, spec: KeySpec) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(base64.b64encode(key).decode("ascii") + "\n")
            out.flush()
            os.fsync(out.fileno())
        # A hard link appears whole or not at all, and fails if the name exists: two
        # processes starting together agree on one key.
        os.link(temporary, path)
    except FileExistsError:
        return _read(path, spec)
    except OSError as exc:
        raise GovernanceError(
            f"cannot create the {spec.purpose} key file {path}: {exc}", code=spec.error_code
        ) from None
    finally:
        temporary.unlink(missing_ok=True)
    log.warning(
        "created the %s key %s: keep it safe and back it up (or set %s); it is not in "
        "the database on purpose",
        spec.purpose,
        path,
        spec.env,
    )
    return key
