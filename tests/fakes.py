"""Deterministic fakes that are real code: vectors depend on the words, seeded by SHA-256."""

from __future__ import annotations

import hashlib
import math
import re

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

_WORD = re.compile(r"\w+", re.UNICODE)


class WordHashEmbeddings(Embeddings):
    """Bag of words hashed into `dim` buckets with SHA-256: texts sharing words are close."""

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.calls: list[int] = []  # batch sizes of embed_documents, to count embedding work

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
            v[h % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def fake_chat(*replies: str) -> GenericFakeChatModel:
    """A chat model that streams the given replies, one per call, split into small chunks."""
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]))
