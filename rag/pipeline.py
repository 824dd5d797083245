"""The whole trip, wired once: corpus -> index -> question -> retrieve -> answer. Entry points build one `Pipeline`
(`build_pipeline(settings)`), and the UI and the CLI talk to nothing else.

One question's path through `Pipeline.stream`: clean it (rag.question.clean), route it once into an `Intent`
(rag.question.router: kind, language, names, stated filters, English text); a count is computed in code
(rag.answer.counts); anything else gets its search query (rag.question.rewrite), its papers (rag.retrieve,
through `PaperRetriever`), or for a review question the papers' reviews (rag.answer.reviews); the sources are
shown; the coverage check may decline (rag.answer.coverage); a comparison gets its table (rag.answer.compare);
the model writes, and plain code checks the citations and sentences (rag.answer.grounded, support).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from rag.answer.compare import build_comparison
from rag.answer.counts import aggregate_text
from rag.answer.coverage import Coverage, coverage
from rag.answer.grounded import closest_titles, stream_answer
from rag.answer.reviews import review_sources, reviewed_papers
from rag.answer.types import Answer
from rag.corpus.papers import LoadReport, Paper, load_corpus
from rag.corpus.reviews import Review, ReviewStore
from rag.errors import EmptyIndexError, IndexError_, ModelError, PaperChatError
from rag.explore.similar import SimilarResult, similar
from rag.explore.topics import TopicMap, ensure_map
from rag.index.store import IngestStats, PaperIndex, ProgressFn, make_client
from rag.models.local_llm import LocalModelServer
from rag.models.slots import FairGate
from rag.offline import prepare_offline
from rag.prompts import NO_REVIEW_SCORES, NO_REVIEWS_EN, NO_REVIEWS_ZH, TRANSLATE_TERMS
from rag.question.clean import clean_question
from rag.question.rewrite import Query, rewrite_query
from rag.question.router import Intent, Kind, route
from rag.question.turns import Exchange, HistoryItem, exchanges
from rag.retrieve.filters import STATUS_GROUPS, Filters
from rag.retrieve.retriever import PaperRetriever
from rag.retrieve.search import Source
from rag.settings import Settings
from rag.text import language

__all__ = [  # what callers (the UI, the CLI, benchmarks) take from here, besides settings and errors
    "Answer", "DoneEvent", "Event", "Exchange", "FairGate", "Filters", "Intent", "Kind", "Paper", "Pipeline", "STATUS_GROUPS",
    "SimilarResult", "Source", "SourcesEvent", "TokenEvent", "TopicMap", "build_pipeline",
]

REWRITE_MAX_TOKENS = 80  # a search query, not an essay: bounds the model's time on it
TRANSLATE_MAX_TOKENS = 24  # a few English terms
RESTART_GRACE_S = 2.0  # after a failed call, how long a killed model server may take to be reaped
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourcesEvent:
    sources: list[Source]
    query: Query | None = None  # what was searched (the rewritten query, when the model wrote one)


@dataclass(frozen=True)
class TokenEvent:
    text: str


@dataclass(frozen=True)
class DoneEvent:
    answer: Answer


Event = SourcesEvent | TokenEvent | DoneEvent


class Pipeline:
    """Holds the index and the chat model; the model (and the embedded server) start on first use."""

    def __init__(self, settings: Settings, index: PaperIndex, llm: BaseChatModel | None = None):
        self.settings = settings
        self.index = index
        self.retriever = PaperRetriever(index=index, settings=settings.retrieval)
        self._llm = llm
        self._server: LocalModelServer | None = None
        self._lock = threading.Lock()
        self._areas: list[str] | None = None  # primary areas in the index, read once, reset by ingest
        self._papers: list[Paper] | None = None  # every indexed paper's record, for counting; reset by ingest
        self._reviews: ReviewStore | None = None

    # -- the chat model ----------------------------------------------------------------------
    @property
    def llm(self) -> BaseChatModel:
        with self._lock:
            if self._llm is None:
                from rag.models.llm import make_chat_model, make_local_server

                if self.settings.llm.backend == "embedded":
                    self._server = make_local_server(self.settings).start()
                self._llm = make_chat_model(self.settings, self._server)
            elif self._server is not None and self._server.ensure_running():
                from rag.models.llm import make_chat_model  # restarted, maybe on another port: a new client

                self._llm = make_chat_model(self.settings, self._server)
            return self._llm

    def _restart_if_dead(self) -> bool:
        """After a failed model call: if the embedded server died, start it again in the background."""
        if self._server is None or self._server.alive(grace_s=RESTART_GRACE_S):
            return False
        log.warning("the embedded model server died (exit code %s); restarting it", self._server.exit_code())

        def restart() -> None:
            try:
                _ = self.llm
            except PaperChatError as exc:
                log.error("restarting the embedded model server failed: %s", exc)

        threading.Thread(target=restart, name="paperchat-model-restart", daemon=True).start()
        return True

    def warm_up(self) -> None:
        """Start the model now rather than on the first question."""
        _ = self.llm

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- corpus and index ----------------------------------------------------------------------
    def ingest_files(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> tuple[LoadReport, IngestStats]:
        report = load_corpus(paths)
        stats = self.index.ingest(report.papers, progress=progress)
        self._areas = self._papers = None
        return report, stats

    def prune(self, keep_ids) -> int:
        removed = self.index.prune(keep_ids)
        self._areas = self._papers = None
        return removed

    def ensure_ingested(self, progress: ProgressFn | None = None) -> tuple[LoadReport, IngestStats] | None:
        """On first start, ingest the configured corpus (the shipped seed papers by default)."""
        if not self.index.is_empty():
            return None
        return self.ingest_files(self.settings.corpus, progress=progress)

    def review_store(self, create: bool = False) -> ReviewStore | None:
        """The reviews store, or None when no reviews were ever ingested (unless `create`)."""
        if self._reviews is None and (create or self.settings.reviews_path.exists()):
            self._reviews = ReviewStore(self.settings.reviews_path)
        return self._reviews

    def ingest_reviews(self, reviews: Sequence[Review]) -> tuple[int, int]:
        """Store reviews; returns (new reviews, reviews of papers not in the index)."""
        known = self.index.paper_ids()
        return self.review_store(create=True).add(reviews), sum(r.paper_id not in known for r in reviews)

    def papers(self) -> list[Paper]:
        """Every indexed paper's record (read once; for counting)."""
        if self._papers is None:
            with self._store():
                self._papers = self.index.all_papers()
        return self._papers

    def areas(self) -> list[str]:
        """The primary areas present in the index (read once)."""
        if self._areas is None:
            with self._store():
                self._areas = self.index.primary_areas()
        return self._areas

    # -- explore --------------------------------------------------------------------------------
    def topic_map(self) -> tuple[TopicMap, bool]:
        """The stored topic map, rebuilt first if the index changed since; True when it was (re)built."""
        with self._store():
            return ensure_map(self.index, self.settings.data_dir)

    def similar(self, paper_id: str | None = None, text: str | None = None, k: int = 5) -> SimilarResult:
        """The nearest papers to an indexed paper or to pasted text (ValueError says what to fix)."""
        with self._store():
            return similar(self.index, paper_id=paper_id, text=text, k=k,
                           threshold=self.settings.embedding.floor("similar"))

    @contextlib.contextmanager
    def _store(self) -> Iterator[None]:
        """Turns a lost Chroma server into a message that says what to do; the next question reconnects."""
        try:
            yield
        except (PaperChatError, ValueError):
            raise
        except Exception as exc:
            if self.settings.chroma.mode != "http":
                raise
            chroma = self.settings.chroma
            log.warning("Chroma server call failed: %s", exc.__class__.__name__)
            raise IndexError_(
                f"Lost the connection to the Chroma server at {chroma.host}:{chroma.port} "
                f"({exc.__class__.__name__}). Check that `chroma run` is up, then ask again."
            ) from exc

    # -- the stages of a question -----------------------------------------------------------------
    def clean(self, question: str | None) -> str:
        """The question as it will be answered, or QuestionError saying what to fix (before any work)."""
        return clean_question(question, self.settings.retrieval.max_question_chars)

    def route(self, question: str, history: Sequence[HistoryItem] = (), pinned: Sequence[str] = ()) -> Intent:
        """The question's Intent (rag.question.router), decided once."""
        return route(question, exchanges(history), pinned, self.areas(), translate=self._translate)

    def _translate(self, text: str) -> str:
        """English terms for Chinese ones the glossary lacks (a short model call; counts need English topics)."""
        reply = self.llm.bind(max_tokens=TRANSLATE_MAX_TOKENS).invoke([HumanMessage(TRANSLATE_TERMS.format(text=text))])
        line = str(reply.content).strip().splitlines()[0].strip(" \"'“”.") if str(reply.content).strip() else ""
        return line if line and language(line) == "en" else ""

    def search_query(self, intent: Intent, history: Sequence[HistoryItem] = ()) -> Query:
        """The standalone query to search for (rag.question.rewrite); the model is asked only when it helps."""
        wanted = self.settings.retrieval.rewrite == "auto" and intent.rewrite
        return rewrite_query(intent, exchanges(history), self.llm.bind(max_tokens=REWRITE_MAX_TOKENS) if wanted else None)

    def retrieve(self, queries: str | Sequence[str], filters: Filters | None = None, k: int | None = None) -> list[Source]:
        with self._store():
            if self.index.is_empty():
                raise EmptyIndexError("No papers are indexed yet: run `paperchat ingest corpus/iclr2026_seed.jsonl` first.")
            return self.retriever.papers(queries, filters or Filters(), k)

    def coverage(self, intent: Intent, query: Query, sources: Sequence[Source],
                 filters: Filters | None = None) -> Coverage | None:
        """Whether the sources can answer (rag.answer.coverage): names from the question as written, key terms
        from English text (the translation, or the glossary's terms, for a question in another language)."""
        if not self.settings.retrieval.coverage_check:
            return None
        english = ([q for q in query.all if language(q) == "en"] or [intent.english]) if intent.foreign else [intent.question]

        def similarity() -> float:  # the closest chunk's cosine to the English query, under the same filters
            hits = self.index.search(english[0] if english else query.text, k=1, filters=filters)
            return hits[0][1] if hits else 0.0

        with self._store():
            return coverage(english, sources, self.index.lexical.document_frequency, self.index.lexical.count(),
                            names_from=[intent.question], similarity=similarity,
                            comparison=intent.kind is Kind.COMPARE, floor=self.settings.embedding.floor("relevance"))

    def stream(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None,
               k: int | None = None, pinned: Sequence[str] = ()) -> Iterator[Event]:
        """Sources first (before the model writes anything), then answer text, then the final answer.

        `filters` are the user's choices (narrowed by what the question states); `pinned` the user's pinned
        papers ("compare the pinned papers" compares exactly those). A bad question raises QuestionError before
        any work; a failed model call raises ModelError (and an embedded server that died is restarted, so
        asking again works)."""
        turns = exchanges(history)
        intent = self.route(self.clean(question), turns, pinned)
        chosen = (filters or Filters()).narrowed_by(intent.filters)
        try:
            if intent.kind is Kind.AGGREGATE:
                yield from self._count(intent, chosen)
                return
            query = self.search_query(intent, turns)
            if intent.kind is Kind.REVIEW:
                yield from self._review_answer(intent, query, chosen, k, turns)
                return
            sources = (self.retriever.named(intent.papers) if intent.papers
                       else self.retrieve(query.all, chosen, k))
            yield SourcesEvent(sources, query)
            cover = None if intent.papers else self.coverage(intent, query, sources, chosen)
            comparison = None
            if intent.kind is Kind.COMPARE and (cover is None or cover.answerable):
                comparison = build_comparison([intent.question, *query.all], sources, intent.compare_count,
                                              intent.chinese)
            llm = self.llm if cover is None or cover.answerable else None
            for item in stream_answer(intent, sources, llm, turns, cover, comparison):
                yield DoneEvent(item) if isinstance(item, Answer) else TokenEvent(item)
        except ModelError as exc:
            if self._restart_if_dead():
                raise ModelError("The embedded model stopped while answering; it is being restarted. "
                                 "Ask again in a few seconds.") from exc
            raise

    def _count(self, intent: Intent, filters: Filters) -> Iterator[Event]:
        """Counts, averages, rankings: computed in code (rag.answer.counts), no model call."""
        agg = intent.aggregate
        store = self.review_store() if agg.needs_reviews else None
        if agg.needs_reviews and store is None:
            text = NO_REVIEW_SCORES
        else:
            papers = self.papers()
            text = aggregate_text(agg, papers, len(papers), filters, store.scores(agg.field) if store else None)
        yield SourcesEvent([])
        yield TokenEvent(text)
        yield DoneEvent(Answer(intent.question, text, [], kind=intent.kind.value))

    def _review_answer(self, intent: Intent, query: Query, filters: Filters, k: int | None,
                 turns: Sequence[Exchange]) -> Iterator[Event]:
        """A question about the reviews, answered from the papers' official reviews, labeled as such."""
        papers = reviewed_papers(intent, query.all, lambda queries, n: self.retrieve(queries, filters, n),
                                 k or self.settings.retrieval.k)
        reviews = review_sources(self.review_store(), intent, papers, self.settings.retrieval.max_source_tokens * 4)
        yield SourcesEvent(reviews or papers, query)
        if not reviews:
            text = (NO_REVIEWS_ZH if intent.chinese else NO_REVIEWS_EN).format(titles=closest_titles(papers))
            yield TokenEvent(text)
            yield DoneEvent(Answer(intent.question, text, papers, refusal="code", kind=intent.kind.value))
            return
        for item in stream_answer(intent, reviews, self.llm, turns):
            yield DoneEvent(item) if isinstance(item, Answer) else TokenEvent(item)

    def ask(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None,
            k: int | None = None) -> Answer:
        for event in self.stream(question, history, filters, k):
            if isinstance(event, DoneEvent):
                return event.answer
        raise AssertionError("stream ended without an answer")


def build_pipeline(settings: Settings, embeddings: Embeddings | None = None,
                   llm: BaseChatModel | None = None) -> Pipeline:
    """Wire the stages from settings; tests pass fakes for `embeddings` and `llm`."""
    prepare_offline(settings.cache_dir)
    if embeddings is None:
        from rag.models.embeddings import make_embeddings

        embeddings = make_embeddings(settings.embedding)
    index = PaperIndex(make_client(settings), embeddings, settings)
    return Pipeline(settings, index, llm)

