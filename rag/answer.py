"""Stage 4, answer: a LangChain chain that grounds the model in numbered sources and streams a cited answer."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from rag.citations import Citation, CitationFilter
from rag.errors import ModelError
from rag.prompts import (
    ANSWER_TEMPLATE,
    CANNOT_ANSWER,
    CANNOT_ANSWER_ZH,
    INSTRUCTIONS_EN,
    INSTRUCTIONS_ZH,
    REFUSAL_MARKERS,
    SOURCE_TEMPLATE,
    SYSTEM_PROMPT,
)
from rag.retrieve import Source
from rag.rewrite import HistoryItem, exchanges

ANSWER_PROMPT = ChatPromptTemplate.from_messages(
    [("system", SYSTEM_PROMPT), MessagesPlaceholder("history"), ("human", ANSWER_TEMPLATE)]
)
MAX_HISTORY_TURNS = 2  # earlier turns cost prefill time on a CPU and rarely matter
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class Answer:
    question: str
    text: str
    sources: list[Source]
    citations: list[Citation] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return any(marker in self.text for marker in REFUSAL_MARKERS)

    def to_json(self) -> dict:
        return {
            "answer": self.text,
            "citations": [{"n": c.n, "id": c.id, "title": c.title} for c in self.citations],
            "retrieved": [s.paper.id for s in self.sources],
            "dropped_citations": self.dropped,
        }


def is_chinese(text: str) -> bool:
    return len(_CJK.findall(text)) >= 2


def format_sources(sources: Sequence[Source]) -> str:
    return "\n\n".join(
        SOURCE_TEMPLATE.format(n=s.n, title=s.paper.title, status=s.paper.status or "status unknown",
                               paper_id=s.paper.id, text=s.text)
        for s in sources
    )


def history_messages(history: Sequence[HistoryItem]) -> list[BaseMessage]:
    """Earlier turns as chat messages, most recent last; an answer names the papers its [n] meant."""
    messages: list[BaseMessage] = []
    for turn in exchanges(history)[-MAX_HISTORY_TURNS:]:
        shown = "; ".join(f"[{i}] {title}" for i, title in enumerate(turn.papers, start=1))
        messages += [HumanMessage(turn.question), AIMessage(turn.answer + (f"\n(Papers: {shown})" if shown else ""))]
    return messages


def prompt_inputs(question: str, sources: Sequence[Source], history: Sequence[HistoryItem] = ()) -> dict:
    chinese = is_chinese(question)
    return {
        "sources": format_sources(sources),
        "question": question.strip(),
        "instructions": INSTRUCTIONS_ZH if chinese else INSTRUCTIONS_EN,
        "history": history_messages(history),
    }


def _model_error(exc: Exception) -> ModelError:
    name = exc.__class__.__name__
    if "Timeout" in name:
        return ModelError("The model took too long to answer. Try again, or raise PAPERCHAT_LLM__TIMEOUT_S.")
    if "Connection" in name:
        return ModelError("The model server cannot be reached. Check that it is running (or PAPERCHAT_LLM__BASE_URL), then retry.")
    if "Authentication" in name or "PermissionDenied" in name:
        return ModelError("The model server refused the API key: check OPENAI_API_KEY or PAPERCHAT_LLM__API_KEY.")
    if "NotFound" in name:
        return ModelError("The model server does not know that model: check PAPERCHAT_LLM__MODEL.")
    return ModelError(f"The model call failed ({name}). Try again; if it keeps failing, check the model server's log.")


def stream_answer(question: str, sources: Sequence[Source], llm: BaseChatModel,
                  history: Sequence[HistoryItem] = ()) -> Iterator[str | Answer]:
    """Yield clean answer text as it is written, then the final `Answer` (always last)."""
    sources = list(sources)
    if not sources:
        text = CANNOT_ANSWER_ZH if is_chinese(question) else CANNOT_ANSWER
        yield text
        yield Answer(question, text, sources)
        return
    # The prompt and the model are called as two steps, not as `ANSWER_PROMPT | llm`: closing a
    # RunnableSequence stream drains it to the end (measured: 16 s), while closing `llm.stream` closes
    # the HTTP response at once, so the model server cancels generation when the user presses Stop.
    messages = ANSWER_PROMPT.format_messages(**prompt_inputs(question, sources, history))
    citations = CitationFilter(sources)
    parts: list[str] = []
    try:
        for chunk in llm.stream(messages):
            clean = citations.feed(str(chunk.text))
            if clean:
                parts.append(clean)
                yield clean
    except ModelError:
        raise
    except Exception as exc:  # the SDK's errors: say what to do, never show a stack trace
        raise _model_error(exc) from exc
    tail = citations.finish()
    if tail:
        parts.append(tail)
        yield tail
    text = "".join(parts).strip()
    yield Answer(question, text, sources, citations.citations(), citations.dropped)


def answer(question: str, sources: Sequence[Source], llm: BaseChatModel,
           history: Sequence[HistoryItem] = ()) -> Answer:
    """The whole answer at once."""
    result = None
    for item in stream_answer(question, sources, llm, history):
        result = item
    assert isinstance(result, Answer)
    return result
