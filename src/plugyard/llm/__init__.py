"""The model layer: one small chat-model interface and its backends (docs/llm.md).

It sits beside the registry, policy and runtimes and knows nothing of plugins: flows
ask it for a constrained answer and turn that answer into an executor call.
"""

from plugyard.llm.choose import llm_from_spec
from plugyard.llm.errors import LlmError
from plugyard.llm.http import OpenAIChatModel, SocketFactory
from plugyard.llm.model import ChatModel, continues, model_name
from plugyard.llm.retry import RetryPolicy
from plugyard.llm.types import (
    ChatAnswer,
    ChatRequest,
    Delta,
    Message,
    TokenLogprob,
    ToolCall,
    Usage,
)

__all__ = [
    "ChatAnswer",
    "ChatModel",
    "ChatRequest",
    "Delta",
    "LlmError",
    "Message",
    "OpenAIChatModel",
    "RetryPolicy",
    "SocketFactory",
    "TokenLogprob",
    "ToolCall",
    "Usage",
    "continues",
    "llm_from_spec",
    "model_name",
]
