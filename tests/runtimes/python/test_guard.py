"""The import guard: the static scan's rules with file and line, and the runtime hook in a
real worker-like process (a fresh interpreter, so the hook never touches the test run)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plugyard.runtimes.python import guard
from plugyard.runtimes.python.guard import Finding, rule_for_import, scan_folder, scan_source


def rules(code: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.rule, f.name) for f in scan_source(textwrap.dedent(code))]


@pytest.mark.parametrize(
    ("code", "rule", "name"),
    [
        ("import requests", "http_client", "requests"),
        ("import httpx", "http_client", "httpx"),
        ("from aiohttp import ClientSession", "http_client", "aiohttp"),
        ("import urllib.request", "http_client", "urllib.request"),
        ("from urllib import request", "http_client", "urllib.request"),
        ("from http import client", "http_client", "http.client"),
        ("import http.client as hc", "http_client", "http.client"),
        ("import socket", "http_client", "socket"),
        ("import ctypes.util", "native_code", "ctypes.util"),
        ("import subprocess", "process", "subprocess"),
        ("from os import system", "process", "os.system"),
        ("import os\nos.system('id')", "process", "os.system"),
        ("import os\nos.execv('/bin/sh', [])", "process", "os.execv"),
        ("import importlib", "dynamic_import", "importlib"),
        ("from importlib import import_module", "dynamic_import", "importlib"),
        ("__import__('socket')", "dynamic_import", "__import__"),
        ("import plugyard.yard", "host_internal", "plugyard.yard"),
        ("from plugyard.store import store", "host_internal", "plugyard.store"),
        ("from plugyard import Yard", "host_internal", "plugyard.Yard"),
        ("from plugyard import *", "host_internal", "plugyard.*"),
    ],
)
def test_each_forbidden_use_is_found_with_its_rule(code: str, rule: str, name: str) -> None:
    found = rules(code)
    assert (rule, name) in [(r, n) for _, r, n in found]


@pytest.mark.parametrize(
    "code",
    [
        "from plugyard import tool, plugin, Outcome, Progress",
        "import plugyard",
        "from plugyard.sdk import helpers",
        "from . import util\nfrom .socket import thing",
        "import json, os, re, asyncio",
        "from os import path, environ",
        "import urllib.parse",
        "from http import HTTPStatus",
        "os.path.join('a', 'b')",
    ],
)
def test_allowed_code_has_no_findings(code: str) -> None:
    assert rules(code) == []


def test_findings_carry_their_line() -> None:
    code = """
    import json

    def fetch():
        import requests
        return requests.get("http://example.com")
    """
    assert rules(code) == [(5, "http_client", "requests")]


def test_a_file_that_does_not_parse_is_a_finding() -> None:
    assert [f.rule for f in scan_source("def broken(:\n")] == ["unparseable"]


def test_a_folder_is_scanned_with_relative_paths_vendor_included(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "vendor" / "dep").mkdir(parents=True)
    (tmp_path / "pkg" / "plugin.py").write_text("import json\nimport subprocess\n")
    (tmp_path / "vendor" / "dep" / "__init__.py").write_text("import ctypes\n")
    (tmp_path / "notes.txt").write_text("import socket\n")
    assert scan_folder(tmp_path) == [
        Finding("pkg/plugin.py", 2, "process", "subprocess"),
        Finding("vendor/dep/__init__.py", 1, "native_code", "ctypes"),
    ]


def test_rule_table_answers_none_for_the_standard_library() -> None:
    assert rule_for_import("json") is None
    assert rule_for_import("plugyard", ["tool"]) is None
    assert rule_for_import("socketserver") is None  # a prefix of a name is not the name


# --------------------------------------------------------------------------- runtime hook

WORKER = """
import sys
sys.path.insert(0, {src!r})
from plugyard.runtimes.python import guard
guard.install({root!r})
sys.path.insert(0, {root!r})
import json, socket  # the host itself may import anything
for module in {modules!r}:
    try:
        __import__(module)
    except ImportError as exc:
        print(module, "refused", getattr(exc, "rule", "?"))
    else:
        print(module, "allowed")
"""
#: Plugin modules and what the hook answers when each is imported, in one worker process.
HOOK_CASES = {
    "already_loaded": ("import socket", "refused http_client"),  # the __import__ door
    "from_os": ("from os import system", "refused process"),
    "internal": ("import plugyard.yard", "refused host_internal"),
    "public": ("from plugyard import tool", "allowed"),
    "plain": ("import json\nimport importlib.metadata", "allowed"),
    # importlib reached without an import statement: the meta-path door catches it.
    "machinery": ("import sys\nsys.modules['importlib'].import_module('pty')", "refused process"),
    # Documented limit, an early warning and not a boundary: sys.modules is one step away.
    "bypass": ("import sys\nsock = sys.modules['socket']", "allowed"),
}


def test_the_runtime_hook_refuses_plugin_imports(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    root.mkdir()
    for module, (code, _) in HOOK_CASES.items():
        (root / f"{module}.py").write_text(code + "\n")
    src = str(Path(guard.__file__).parents[3])
    script = WORKER.format(src=src, root=str(root), modules=list(HOOK_CASES))
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    answers = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert answers == {module: expected for module, (_, expected) in HOOK_CASES.items()}


def test_install_and_uninstall_restore_the_import_machinery() -> None:
    import builtins

    before_import, before_path = builtins.__import__, list(sys.meta_path)
    guard.install("/nonexistent/plugin")
    try:
        assert builtins.__import__ is not before_import
        import json  # host code outside the root passes

        assert json.dumps(1) == "1"
    finally:
        guard.uninstall()
    assert builtins.__import__ is before_import
    assert sys.meta_path == before_path
