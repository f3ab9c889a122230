"""``PLUGYARD_LLM`` names a chat model; nothing loads or connects until it is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard.llm import ChatRequest, LlmError, OpenAIChatModel, llm_from_spec
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.testing import FakeModelServer, Reply
from plugyard.yard import Settings, Yard


def test_embedded_qwen_05b_is_the_default() -> None:
    model = llm_from_spec(None)
    assert isinstance(model, EmbeddedChatModel)
    assert model.identity == "embedded:qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert llm_from_spec("embedded:default").identity == model.identity


@pytest.mark.parametrize(
    ("alias", "name"),
    [("quality", "qwen2.5-coder-1.5b-instruct-q4_k_m"), ("fast", "smollm2-135m-instruct-q4_1")],
)
def test_aliases_name_the_quality_and_the_smoke_models(alias: str, name: str) -> None:
    assert llm_from_spec(f"embedded:{alias}").identity == f"embedded:{name}"
    assert llm_from_spec(f"embedded:{name}").identity == f"embedded:{name}"


def test_openai_and_ollama_specs() -> None:
    model = llm_from_spec("openai:https://api.openai.com/v1:gpt-4o-mini", api_key="k")
    assert isinstance(model, OpenAIChatModel)
    assert model.identity == "openai:https://api.openai.com/v1:gpt-4o-mini"
    local = llm_from_spec("ollama:qwen2.5:0.5b", ollama_url="127.0.0.1:11434")
    assert local.identity == "openai:http://127.0.0.1:11434/v1:qwen2.5:0.5b"


@pytest.mark.parametrize(
    "spec", ["gpt", "openai:gpt-4o", "openai:ftp://x:m", "ollama:", "embedded:nope"]
)
def test_bad_specs_say_what_is_wrong(spec: str) -> None:
    with pytest.raises(ValueError, match=r"expected|unknown"):
        llm_from_spec(spec)


def test_settings_read_the_environment() -> None:
    env = {"PLUGYARD_LLM": "ollama:m", "OPENAI_API_KEY": "sk-env"}
    settings = Settings.from_env(env)
    assert (settings.llm, settings.llm_api_key) == ("ollama:m", "sk-env")
    ours = Settings.from_env({**env, "PLUGYARD_LLM_API_KEY": "sk-ours"})
    assert ours.llm_api_key == "sk-ours"


def _yard_answer(allow: tuple[str, ...], tmp_path: Any) -> Any:
    async def main() -> Any:
        async with FakeModelServer([Reply.text("routed")]) as fake:
            settings = Settings(
                database=str(tmp_path / "y.db"),
                builtins=False,
                llm=f"openai:{fake.base_url}:fake",
                outbound_allow=tuple(a.format(port=fake.port) for a in allow),
            )
            yard = Yard.from_settings(settings)
            try:
                return await yard.llm.chat(ChatRequest.of(("user", "hi"), deadline_s=5))
            except LlmError as exc:
                return exc
            finally:
                yard.close()

    return asyncio.run(main())


def test_the_yard_reaches_a_loopback_model_server_only_when_allowlisted(tmp_path: Any) -> None:
    refused = _yard_answer((), tmp_path)
    assert isinstance(refused, LlmError)
    assert refused.code == "outbound_blocked"
    answer = _yard_answer(("127.0.0.1:{port}",), tmp_path)
    assert answer.text == "routed"
