"""Inside the sandbox: nobody's uid, only the plugin folder (read-only), no network —
escape attempts against TCP, UDP and UNIX-socket canaries on loopback reach none."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.runtimes.sandbox import (
    PLUGIN_DIR,
    SANDBOX_UID,
    SandboxLimits,
    python_path,
    sandboxed,
    unavailable_reason,
)

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason="no bubblewrap here")


def _run(code: str, folder: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    folder.chmod(folder.stat().st_mode | 0o055)  # pytest makes 0700 folders; nobody reads
    boot = f"import sys;sys.path[:0]={list(python_path())!r}\n"
    argv = sandboxed([sys.executable, "-I", "-S", "-c", boot + code], folder=str(folder),
                     env={"PATH": "/usr/bin"}, **kw)  # type: ignore[arg-type]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


class Canaries:
    """Listeners on loopback that count every byte or connection reaching them."""

    def __init__(self, folder: Path) -> None:
        # outside the plugin folder (the sandbox sees none of the host's /tmp), writable by
        # anyone, and an abstract one (no file at all; per network namespace)
        self.hits: list[str] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(folder / "canary.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        Path(self.unix_path).chmod(0o777)
        self.unix.listen()
        self.abstract_name = f"plugyard-canary-{id(self)}"
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen()
        for sock in (self.tcp, self.udp, self.unix, self.abstract):
            sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for name, sock in (("tcp", self.tcp), ("unix", self.unix), ("abs", self.abstract)):
                try:
                    conn, _ = sock.accept()
                    self.hits.append(name)
                    conn.close()
                except OSError:
                    pass
            try:
                self.udp.recvfrom(100)
                self.hits.append("udp")
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for sock in (self.tcp, self.udp, self.unix, self.abstract):
            sock.close()


@pytest.fixture
def canaries(tmp_path: Path) -> Iterator[Canaries]:
    outside = tmp_path / "host"
    outside.mkdir()
    outside.chmod(0o777)
    tmp_path.chmod(0o755)
    found = Canaries(outside)
    yield found
    found.close()


def test_code_runs_as_nobody_in_its_folder_seeing_little(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("ok")
    done = _run(
        "import os; print(os.getuid(), os.getcwd(), open('mine.txt').read(),"
        " sorted(os.listdir('/')), os.path.exists('/etc/passwd'), os.path.exists('/root/.ssh'))",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    uid, cwd, text, *_ = done.stdout.split(maxsplit=3)
    assert (int(uid), cwd, text) == (SANDBOX_UID, PLUGIN_DIR, "ok")
    assert "False False" in done.stdout
    assert "'home'" not in done.stdout


def test_the_folder_is_read_only_unless_writable(tmp_path: Path) -> None:
    code = "open('new.txt', 'w').write('x')"
    assert _run(code, tmp_path).returncode != 0
    tmp_path.chmod(0o777)
    assert _run(code, tmp_path, writable=True).returncode == 0


def test_the_environment_is_only_what_was_given(tmp_path: Path) -> None:
    done = _run("import os; print(sorted(os.environ))", tmp_path)
    # LC_CTYPE is Python's own locale coercion (PEP 538) in a C locale
    assert set(eval(done.stdout)) <= {"PATH", "PWD", "LC_CTYPE"}


def test_limits_apply_inside(tmp_path: Path) -> None:
    done = _run(
        "import resource as r; print(r.getrlimit(r.RLIMIT_NOFILE)[0], r.getrlimit(r.RLIMIT_AS)[0])",
        tmp_path,
        limits=SandboxLimits(open_files=32, memory_mb=512),
    )
    assert done.stdout.split() == ["32", str(512 * 1024 * 1024)]


ESCAPES = """
import socket, subprocess, ctypes, importlib, os
port_tcp, port_udp, unix_path, abstract = {tcp}, {udp}, {unix!r}, {abstract!r}
reached = []
def attempt(name, fn):
    try:
        fn(); reached.append(name)
    except Exception:
        pass
def tcp():
    s = socket.create_connection(("127.0.0.1", port_tcp), timeout=1); s.send(b"x")
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", port_udp)); s.sendto(b"x", ("::ffff:127.0.0.1", port_udp))
def unix():
    s = socket.socket(socket.AF_UNIX); s.connect(unix_path)
def abstract_unix():
    s = socket.socket(socket.AF_UNIX); s.connect("\\0" + abstract)
def raw():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
def via_importlib():
    importlib.import_module("socket").create_connection(("127.0.0.1", port_tcp), timeout=1)
def via_ctypes():
    libc = ctypes.CDLL(None)
    fd = libc.socket(2, 1, 0)
    addr = (ctypes.c_ubyte * 16)(2, 0, port_tcp >> 8, port_tcp & 255, 127, 0, 0, 1)
    if libc.connect(fd, addr, 16) != 0: raise OSError("refused")
def via_subprocess():
    code = "import socket; socket.create_connection(('127.0.0.1', %d), timeout=1)" % port_tcp
    subprocess.run([__import__('sys').executable, "-c", code], check=True, timeout=5)
for name, fn in [("tcp", tcp), ("udp", udp), ("unix", unix), ("abstract", abstract_unix),
                 ("raw", raw), ("importlib", via_importlib), ("ctypes", via_ctypes),
                 ("subprocess", via_subprocess)]:
    attempt(name, fn)
print("REACHED", reached)
"""


def test_escape_attempts_reach_no_canary(tmp_path: Path, canaries: Canaries) -> None:
    code = ESCAPES.format(
        tcp=canaries.tcp.getsockname()[1],
        udp=canaries.udp.getsockname()[1],
        unix=canaries.unix_path,
        abstract=canaries.abstract_name,
    )
    done = _run(code, tmp_path)
    assert "REACHED" in done.stdout, done.stderr
    # the UDP send "works" into the sandbox's own empty loopback; what counts is the canary
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline and not canaries.hits:
        time.sleep(0.05)
    assert canaries.hits == []
    print(done.stdout)
    assert "REACHED []" in done.stdout or "REACHED ['udp']" in done.stdout
