"""plugyard's Python worker runs a plugin folder over the protocol, trusted or sandboxed:
its vendor/ on the path (no .pth run), host calls over the pipe, print kept off stdout."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from plugyard.runtimes.base import Target
from plugyard.runtimes.sandbox import SANDBOX_UID, unavailable_reason
from plugyard.runtimes.sandbox.uids import UIDS
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, pyworker_argv
from runtimes.subprocess.helpers import call, pyworker_target

MANIFEST = """
    id: pyw
    name: Py worker
    description: Runs in a worker.
    capabilities:
      - id: greet
        description: Greets.
        parameters:
          - {name: who, type: string}
      - id: remember
        description: Reads the cache.
      - id: where
        description: Where it runs.
"""
CODE = """
    import os
    import vendored_thing

    def greet(who):
        print("noise that must not reach the protocol")
        return {"text": vendored_thing.hello(who)}

    def remember(host):
        return host.cache.get("k")

    def where():
        return {"uid": os.getuid(), "cwd": os.getcwd()}
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "plugin"
    (folder / "vendor").mkdir(parents=True)
    (folder / "plugin.yaml").write_text(textwrap.dedent(MANIFEST))
    (folder / "plugin.py").write_text(textwrap.dedent(CODE))
    (folder / "vendor" / "vendored_thing.py").write_text("def hello(w):\n    return 'hi ' + w\n")
    flag = tmp_path / "pth-ran"
    (folder / "vendor" / "evil.pth").write_text(f"import os; open({str(flag)!r}, 'w')\n")
    return folder


class _Cache:
    def get(self, key: str) -> str:
        return f"value of {key}"


class _Host:
    cache = _Cache()


@pytest.mark.parametrize("trust", ["trusted", "untrusted"])
def test_a_python_folder_runs_in_the_worker(
    tmp_path: Path, trust: str, runtime: SubprocessPluginRuntime
) -> None:
    if trust == "untrusted" and unavailable_reason():
        pytest.skip(f"no sandbox: {unavailable_reason()}")
    folder = _folder(tmp_path)
    target = pyworker_target(folder, trust)
    assert SubprocessPluginRuntime().check(target) is None  # describe agrees
    ops = {op.id: op for op in target.descriptor.operations}

    def run(op: str, params: dict[str, object]) -> object:
        one = Target(
            target.descriptor.model_copy(update={"operations": (ops[op],)}),
            target.location,
            target.trust,
            target.content_hash,
        )
        outcome = call(runtime, one, params, host=_Host())
        assert outcome.status == "success", outcome.error
        return outcome.data

    assert run("greet", {"who": "ann"}) == {"text": "hi ann"}
    assert run("remember", {}) == "value of k"
    where = run("where", {})
    assert isinstance(where, dict)
    if trust == "untrusted":  # as root, a uid of the sandbox's own; else nobody in a userns
        assert where["cwd"] == "/plugin"
        assert where["uid"] in UIDS if os.geteuid() == 0 else where["uid"] == SANDBOX_UID
    assert not (tmp_path / "pth-ran").exists()


def test_the_worker_command_is_the_documented_one(tmp_path: Path) -> None:
    argv = pyworker_argv(str(tmp_path))
    assert argv == [sys.executable, "-I", "-S", "-m", "plugyard.runtimes.subprocess.pyworker",
                    str(tmp_path)]  # fmt: skip
