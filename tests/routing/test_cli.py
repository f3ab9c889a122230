"""``plugyard ask`` against the scripted fake, which runs on its own loop in a thread
(the command runs its own)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from plugyard.cli.main import cli
from plugyard.llm.testing import FakeModelServer, Reply

from .conftest import choose


@contextmanager
def fake_in_thread(script: list[Reply]) -> Iterator[FakeModelServer]:
    loop = asyncio.new_event_loop()
    fake = FakeModelServer(script)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(fake.__aenter__(), loop).result(timeout=10)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.__aexit__(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def run(tmp_path: Path, fake: FakeModelServer, *args: str) -> tuple[int, str]:
    env = {
        "PLUGYARD_LLM": f"openai:{fake.base_url}:fake",
        "PLUGYARD_OUTBOUND_ALLOW": f"127.0.0.1:{fake.port}",
        "PLUGYARD_EMBEDDER": "hashing",
    }
    command = [] if args and args[0] == "confirm" else ["ask"]
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "y.db"), *command, *args], env=env)
    return result.exit_code, result.output


CONVERT = {"value": 5, "from_unit": "km", "to_unit": "mi"}


def convert() -> Reply:
    return choose("unit-convert", "convert", **CONVERT)


def test_ask_prints_each_step_then_the_answer(tmp_path: Path) -> None:
    with fake_in_thread([convert()]) as fake:
        code, out = run(tmp_path, fake, "convert 5 km to miles")
    assert code == 0, out
    step, chose, status = out.splitlines()[:3]
    assert step.startswith("step 1: offered unit-convert.convert")
    assert "chose unit-convert.convert" in chose and "→ success" in chose
    assert status == "answered:" and "3.1" in out


def test_ask_json_prints_the_answer_with_its_trace(tmp_path: Path) -> None:
    with fake_in_thread([convert()]) as fake:
        code, out = run(tmp_path, fake, "convert 5 km to miles", "--json", "--k", "3")
    answer = json.loads(out)
    assert code == 0 and answer["status"] == "answered"
    assert answer["steps"][0]["choice"]["operation"] == "convert"
    assert len(answer["steps"][0]["retrieved"]) <= 3


def test_ask_dry_run_prints_the_plan_and_calls_nothing(tmp_path: Path) -> None:
    with fake_in_thread([convert()]) as fake:
        args = ("convert 5 km to miles", "--json", "--dry-run")
        code, out = run(tmp_path, fake, *args)
    answer = json.loads(out)
    assert code == 0 and answer["status"] == "planned"
    assert answer["data"]["plugin"] == "unit-convert" and answer["cost"]["tool_calls"] == 0


@pytest.mark.parametrize("script", [[Reply.garbage(), Reply.garbage()], [Reply.error(400)]])
def test_ask_exits_1_on_an_error_answer(tmp_path: Path, script: list[Reply]) -> None:
    with fake_in_thread(script) as fake:
        code, out = run(tmp_path, fake, "convert 5 km to miles", "--json", "--max-steps", "1")
    assert code == 1
    assert json.loads(out)["error"]["code"].startswith("llm_")


def test_plugyard_confirm_refuses_a_receipt_it_did_not_hold(tmp_path: Path) -> None:
    # The success path (held, confirmed once, then receipt_used) is the flow's own
    # (test_injection.py); here the command's wiring: the receipt, the code, exit 1.
    with fake_in_thread([]) as fake:
        code, out = run(tmp_path, fake, "confirm", "pyr_" + "x" * 43, "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "invalid_receipt"
