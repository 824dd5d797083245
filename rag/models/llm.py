"""The one module that knows where the chat model lives. Always reached through the OpenAI API: OpenAI itself,
any OpenAI-compatible server (vLLM, Ollama, llama.cpp), or the bundled model served on 127.0.0.1."""

from __future__ import annotations

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from rag.models.local_llm import LocalModelServer, assemble_model
from rag.settings import Settings

EMBEDDED_MODEL_NAME = "paperchat-embedded"


def chat_openai(base_url: str | None, api_key: str, model: str, settings: Settings) -> BaseChatModel:
    return init_chat_model(
        model,
        model_provider="openai",
        base_url=base_url,
        api_key=api_key,
        temperature=settings.llm.temperature,
        max_tokens=settings.llm.max_tokens,
        timeout=settings.llm.timeout_s,
        max_retries=1,
        streaming=True,
    )


def make_local_server(settings: Settings) -> LocalModelServer:
    """The embedded llama.cpp server (not started yet). Assembles the bundled model on first use."""
    model_path = settings.embedded_llm.model_path or assemble_model(settings.models_dir)
    return LocalModelServer(model_path, settings.embedded_llm, settings.logs_dir / "llm-server.log")


def make_chat_model(settings: Settings, server: LocalModelServer | None = None) -> BaseChatModel:
    """A chat model for the configured backend; the embedded one needs its (started) server."""
    if settings.llm.backend == "openai":
        return chat_openai(settings.llm.base_url, settings.llm.resolved_api_key(), settings.llm.model, settings)
    if server is None:
        raise ValueError("the embedded backend needs a LocalModelServer")
    return chat_openai(server.base_url, "local", EMBEDDED_MODEL_NAME, settings)
