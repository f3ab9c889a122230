"""At registration: the executable is pinned and allowlisted, the environment is
allowlisted, and a wrapper that lies in ``describe`` stays unavailable with a code."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from plugyard.manifest.model import SubprocessRuntime
from plugyard.runtimes.base import Target
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, SubprocessSettings
from plugyard.runtimes.subprocess.spec import SpecError, resolve
from runtimes.subprocess.helpers import MARKER, call, chaos_target


def _with_command(target: Target, command: str, *args: str) -> Target:
    runtime = target.descriptor.runtime
    assert isinstance(runtime, SubprocessRuntime)
    changed = runtime.model_copy(update={"command": command, "args": args})
    return replace(target, descriptor=target.descriptor.model_copy(update={"runtime": changed}))


def test_python3_is_pinned_to_the_running_interpreter(tmp_path: Path) -> None:
    target, _ = chaos_target(tmp_path)
    spec = resolve(target, SubprocessSettings())
    assert spec.argv[0] == os.path.realpath(sys.executable)
    assert spec.argv[1:] == ("wrapper.py",)


def test_an_executable_off_the_allowlist_is_refused(tmp_path: Path) -> None:
    target, _ = chaos_target(tmp_path)
    with pytest.raises(SpecError):
        resolve(_with_command(target, "sh", "-c", "true"), SubprocessSettings())
    assert resolve(_with_command(target, "sh"), SubprocessSettings(allow=("sh",))).argv[0]


def test_a_script_in_its_own_folder_runs_only_for_trusted_plugins(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    target, _ = chaos_target(tmp_path)
    local = _with_command(target, "./run.sh")
    assert resolve(local, SubprocessSettings()).argv[0] == str(script.resolve())
    with pytest.raises(SpecError):
        resolve(replace(local, trust="untrusted"), SubprocessSettings())


def test_the_environment_is_path_lang_and_the_manifest_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLUGYARD_SECRET_THING", "leak")
    target, marker = chaos_target(tmp_path, env={"EXTRA": "1"})
    spec = resolve(target, SubprocessSettings())
    assert set(spec.env) == {"PATH", "LANG", MARKER, "EXTRA"}
    assert spec.env[MARKER] == marker


def test_mrp_wrapper_timeout_and_input_cap_are_honoured(tmp_path: Path) -> None:
    target, _ = chaos_target(tmp_path, timeout_ms=30_000)
    descriptor = target.descriptor.model_copy(update={"x": {"/maxInputSizeBytes": 65536}})
    spec = resolve(replace(target, descriptor=descriptor), SubprocessSettings())
    assert spec.max_input == 65536
    assert spec.timeout_s == 30.0
    assert spec.mode == "persistent"


@pytest.mark.parametrize("lie", ["garbage", "ops", "junk"])
def test_a_wrapper_that_lies_in_describe_is_unavailable_with_a_code(
    tmp_path: Path, lie: str
) -> None:
    target, _ = chaos_target(tmp_path, env={"LIE": lie})
    reason = SubprocessPluginRuntime().check(target)
    assert reason is not None
    assert reason.startswith("wrapper_protocol_error:")


def test_a_wrapper_that_does_not_describe_itself_is_available(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path)
    assert SubprocessPluginRuntime().check(target) is None


def test_an_untrusted_wrapper_is_refused_where_there_is_no_sandbox(
    runtime: SubprocessPluginRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import plugyard.runtimes.subprocess.runtime as module

    monkeypatch.setattr(module, "unavailable_reason", lambda: "no bwrap here")
    target, _ = chaos_target(tmp_path, trust="untrusted")
    assert (runtime.check(target) or "").startswith("sandbox_unavailable:")
    result = call(runtime, target, {"do": "echo"})
    assert result.error is not None
    assert result.error.code == "sandbox_unavailable"


def test_a_folder_nobody_can_read_is_refused_for_the_sandbox(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root drops to uid 65534")
    target, _ = chaos_target(tmp_path / "closed", trust="untrusted")
    (tmp_path / "closed").chmod(0o700)
    with pytest.raises(SpecError):
        resolve(target, SubprocessSettings())
