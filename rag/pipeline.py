"""The whole trip, wired once: corpus -> index -> retrieve -> answer. Entry points build one `Pipeline`."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from rag.answer.aggregate import aggregate_text, parse_aggregate
from rag.answer.grounded import Answer, closest_titles, is_chinese, stream_answer
from rag.answer.compare import introduced_names, is_comparison
from rag.corpus.papers import LoadReport, load_corpus
from rag.errors import EmptyIndexError, IndexError_, ModelError, PaperChatError
from rag.index.store import IngestStats, PaperIndex, ProgressFn, make_client
from rag.models.local_llm import LocalModelServer
from rag.offline import prepare_offline
from rag.answer.prompts import NO_REVIEW_SCORES, NO_REVIEWS_EN, NO_REVIEWS_ZH
from rag.question.clean import clean_question
from rag.corpus.reviews import Review, ReviewStore, fields_for, is_review_question, review_topic
from rag.retrieve.search import Filters, Source, constraints_in, merge_filters, primary_areas, retrieve
from rag.question.rewrite import HistoryItem, Query, exchanges, is_foreign, needs_rewrite, rewrite_query
from rag.settings import Settings
from rag.answer.verify import Coverage, coined_names, coverage, names_paper


REWRITE_MAX_TOKENS = 80  # a search query, not an essay: bounds the model's time on it
MAX_REVIEW_SOURCES = 4  # reviews given to the model for a review question (the top paper's first)
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
        self._llm = llm
        self._server: LocalModelServer | None = None
        self._lock = threading.Lock()
        self._areas: list[str] | None = None  # primary areas in the index, read once, reset by ingest
        self._papers: list | None = None  # every indexed paper's record, for counting; reset by ingest
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
        if self._server is None or self._server.alive():
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

    # -- the stages --------------------------------------------------------------------------
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

    # -- reviews (rag.corpus.reviews) -------------------------------------------------------------------
    def review_store(self, create: bool = False) -> ReviewStore | None:
        """The reviews store, or None when no reviews were ever ingested (unless `create`)."""
        if self._reviews is None and (create or self.settings.reviews_path.exists()):
            self._reviews = ReviewStore(self.settings.reviews_path)
        return self._reviews

    def ingest_reviews(self, reviews: Sequence[Review]) -> tuple[int, int]:
        """Store reviews; returns (new reviews, reviews of papers not in the index)."""
        known = self.index.paper_ids()
        return self.review_store(create=True).add(reviews), sum(r.paper_id not in known for r in reviews)

    def reviewed_papers(self, question: str, query: Query, filters: Filters | None, k: int | None) -> list[Source]:
        """The papers a review question is about: searched without its review words ("reviewers" would find
        papers on peer review). When the question calls papers by name, only the papers that go by it (a title's
        "MMSI-Bench: ...", "we propose X"; written as asked beats another case: "REALIGN" is not "ReAlign") or,
        failing that, use it ("DroPE"), the most frequent users first: another paper's reviews would answer a
        question not asked. A question naming nothing keeps the search's order."""
        found = self.retrieve([review_topic(q) for q in query.all], filters, max(k or self.settings.retrieval.k, 10))
        names = {n for q in query.all for n in coined_names(q)}

        def uses(s: Source) -> int:  # case-sensitive: "DroPE" is not "drope" in "dropout"
            text = f"{s.paper.title} {s.paper.abstract}"
            return sum(text.count(n) for n in names)

        def titled(s: Source) -> int:  # the paper goes by the name: its title's, as written (2) or in another
            by_title = max(names_paper(q, s.paper.title) for q in query.all)  # case (1); or "we propose <name>"
            return by_title or (2 if names & introduced_names(s.paper) else 0)

        rank = {s.n: (titled(s), uses(s)) for s in found}  # each computed once
        ordered = sorted(found, key=lambda s: (-rank[s.n][0], -rank[s.n][1], s.n))
        best = rank[ordered[0].n][0] if ordered else 0
        ordered = ([s for s in ordered if rank[s.n][0] == best] if best
                   else [s for s in ordered if rank[s.n][1]] or ordered)
        return [replace(s, n=i) for i, s in enumerate(ordered[:k or self.settings.retrieval.k], start=1)]

    def review_sources(self, question: str, papers: Sequence[Source]) -> list[Source]:
        """The reviews of the top papers as numbered sources, with the part the question asks about."""
        store = self.review_store()
        if store is None or not papers:
            return []
        by_paper = store.for_papers([s.paper.id for s in papers[:2]])
        chars = self.settings.retrieval.max_source_tokens * 4
        found: list[Source] = []
        for source in papers[:2]:
            for review in by_paper[source.paper.id]:
                text = "\n".join(f"{f.capitalize()}: {getattr(review, f)}" for f in fields_for(question)
                                 if getattr(review, f))
                found.append(Source(len(found) + 1, source.paper, source.score, (text[:chars],),
                                    review_id=review.review_id, review_scores=review.scores()))
                if len(found) == MAX_REVIEW_SOURCES:
                    return found
        return found

    def all_papers(self) -> list:
        """Every indexed paper's record (read once, in pages; for aggregate questions)."""
        if self._papers is None:
            with self._store():
                ids = sorted(self.index.paper_ids())
                found = {}
                for i in range(0, len(ids), 5_000):
                    found.update(self.index.get_papers(ids[i:i + 5_000]))
                self._papers = list(found.values())
        return self._papers

    def stated_filters(self, question: str) -> Filters:
        """Constraints the question states itself ("oral papers on ...", "in the X area")."""
        if self._areas is None:
            self._areas = primary_areas(self.index)
        return constraints_in(question, self._areas)

    @contextlib.contextmanager
    def _store(self) -> Iterator[None]:
        """Turns a lost Chroma server into a message that says what to do; the next question reconnects."""
        try:
            yield
        except PaperChatError:
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

    def retrieve(self, question: str | Sequence[str], filters: Filters | None = None, k: int | None = None) -> list[Source]:
        with self._store():
            if self.index.is_empty():
                raise EmptyIndexError("No papers are indexed yet: run `paperchat ingest corpus/iclr2026_seed.jsonl` first.")
            return retrieve(self.index, question, self.settings.retrieval, filters, k)

    def search_query(self, question: str, history: Sequence[HistoryItem] = ()) -> Query:
        """The standalone query to search for (rag.question.rewrite); the model is asked only when it helps."""
        turns = exchanges(history)
        wanted = self.settings.retrieval.rewrite == "auto" and needs_rewrite(question, turns)
        return rewrite_query(question, turns, self.llm.bind(max_tokens=REWRITE_MAX_TOKENS) if wanted else None)

    def coverage(self, question: str, query: Query, sources: Sequence[Source],
                 filters: Filters | None = None) -> Coverage | None:
        """Whether the sources can answer (rag.answer.verify): names from the question as written, key terms from
        the English query (the translation, for a question in another language)."""
        if not self.settings.retrieval.coverage_check:
            return None
        english = [q for q in query.all if not is_foreign(q)] if is_foreign(question) else [question]

        def similarity() -> float:  # the closest chunk's cosine to the English query, under the same filters
            hits = self.index.search(english[0] if english else query.text, k=1, where=(filters or Filters()).where())
            return hits[0][1] if hits else 0.0

        with self._store():
            return coverage(english, sources, self.index.lexical.document_frequency, self.index.lexical.count(),
                            names_from=[question], similarity=similarity,
                            comparison=any(is_comparison(q) for q in [question, *english]))

    def stream(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None,
               k: int | None = None) -> Iterator[Event]:
        """Sources first (before the model writes anything), then answer text, then the final answer.

        A bad question raises QuestionError before any work; a failed model call raises ModelError (and an
        embedded server that died is restarted, so asking again works)."""
        question = clean_question(question, self.settings.retrieval.max_question_chars)
        counted = parse_aggregate(question)
        if counted is not None:  # counts, averages, rankings: computed in code (rag.answer.aggregate), no model call
            store = self.review_store() if counted.needs_reviews else None
            if counted.needs_reviews and store is None:
                text = NO_REVIEW_SCORES
            else:
                papers = self.all_papers()
                text = aggregate_text(counted, papers, len(papers), filters or Filters(), self.stated_filters(question),
                                      store.scores(counted.field) if store else None)
            yield SourcesEvent([])
            yield TokenEvent(text)
            yield DoneEvent(Answer(question, text, [], counted=True))
            return
        try:
            filters = merge_filters(filters, self.stated_filters(question))
            query = self.search_query(question, history)
            if is_review_question(question):  # answered from the papers' official reviews, labeled as such
                sources = self.reviewed_papers(question, query, filters, k)
                reviews = self.review_sources(question, sources)
                yield SourcesEvent(reviews or sources, query)
                if not reviews:
                    text = (NO_REVIEWS_ZH if is_chinese(question) else NO_REVIEWS_EN).format(titles=closest_titles(sources))
                    yield TokenEvent(text)
                    yield DoneEvent(Answer(question, text, sources, refusal="code"))
                    return
                for item in stream_answer(question, reviews, self.llm, history):
                    yield DoneEvent(item) if isinstance(item, Answer) else TokenEvent(item)
                return
            sources = self.retrieve(query.all, filters, k)
            yield SourcesEvent(sources, query)
            cover = self.coverage(question, query, sources, filters)
            llm = self.llm if cover is None or cover.answerable else None
            for item in stream_answer(question, sources, llm, history, cover, named=query.all):
                yield DoneEvent(item) if isinstance(item, Answer) else TokenEvent(item)
        except ModelError as exc:
            if self._restart_if_dead():
                raise ModelError("The embedded model stopped while answering; it is being restarted. "
                                 "Ask again in a few seconds.") from exc
            raise

    def ask(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None) -> Answer:
        for event in self.stream(question, history, filters):
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
