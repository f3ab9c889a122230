"""Per-plugin virtual environments (Shu's Install Policy): off by default; when an
operator turns them on, a package's ``requirements.txt`` is installed into a venv of its
own (``files/.venv``), from the operator's index or wheel folder only, and the plugin's
worker imports from it (before plugyard's own packages, after the package's ``vendor/``).

- Off, a package with a ``requirements.txt`` is refused: ``venv_disabled``.
- Wheels only (``--only-binary=:all:``): installing never runs a package's build code.
- pip runs with a cleared environment, no cache, no input and a deadline; a failure is
  ``venv_failed`` and, as with any refusal, nothing of the package is left installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from plugyard.errors import PackageError

REQUIREMENTS = "requirements.txt"
VENV = ".venv"


@dataclass(frozen=True)
class VenvPolicy:
    """The operator's: whether venvs are allowed, and where packages come from."""

    enabled: bool = False
    index_url: str | None = None
    wheels: Path | None = None
    timeout_s: float = 600.0


def needs_venv(files: Path) -> bool:
    return (files / REQUIREMENTS).is_file()


def site_packages(files: Path) -> Path:
    """Where the venv of the package in ``files`` keeps its packages."""
    relative = Path(sysconfig.get_path("purelib")).relative_to(sys.prefix)
    return files / VENV / relative


def build(files: Path, policy: VenvPolicy | None) -> Path:
    """Make ``files/.venv`` and install ``requirements.txt`` into it; its site-packages."""
    if policy is None or not policy.enabled:
        raise PackageError(
            "the package has a requirements.txt; per-plugin virtual environments are off",
            code="venv_disabled",
        )
    if policy.wheels is None and policy.index_url is None:
        raise PackageError("no package index or wheel folder is configured", code="venv_failed")
    venv = files / VENV
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], policy, "make the venv")
    source = (
        ["--no-index", "--find-links", str(policy.wheels)]
        if policy.wheels is not None
        else ["--index-url", str(policy.index_url)]
    )
    python = venv / "bin" / "python"
    command = [
        sys.executable, "-m", "pip", "--python", str(python), "install", "--no-input",
        "--disable-pip-version-check", "--no-cache-dir", "--only-binary=:all:", *source,
        "--requirement", str(files / REQUIREMENTS),
    ]  # fmt: skip
    _run(command, policy, "install requirements.txt")
    return site_packages(files)


def _run(command: list[str], policy: VenvPolicy, what: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PIP_NO_INPUT": "1"}
    try:
        done = subprocess.run(
            command, capture_output=True, timeout=policy.timeout_s, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        raise PackageError(f"could not {what} in time", code="venv_failed") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise PackageError(f"could not {what}: {' '.join(tail)}", code="venv_failed")
