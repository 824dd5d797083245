"""The whole trip, wired once: corpus -> index -> question -> retrieve -> answer. Entry points build one `Pipeline`
(`build_pipeline(settings)`), and the UI and the CLI talk to nothing else.

One question's path through `Pipeline.stream`: clean it (rag.question.clean), route it once into an `Intent`
(rag.question.router: kind, language, names, stated filters, English text); a count is computed in code
(rag.answer.counts); anything else gets its search query (rag.question.rewrite), its papers (rag.retrieve,
through `PaperRetriever`), or for a review question the papers' reviews (rag.answer.reviews); the sources are
shown; the coverage check may decline (rag.answer.coverage); a comparison gets its table (rag.answer.compare);
the model's yes/no on the sources may still decline (rag.answer.judge); the model writes, and plain code checks
the citations and sentences (rag.answer.grounded, support).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import tiktoken
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from rag.answer.citations import to_citation
from rag.answer.compare import Comparison, build_comparison
from rag.answer.counts import aggregate_text
from rag.answer.coverage import AGREEMENT_TOP, Coverage, coverage
from rag.answer.extract import Extract, quote
from rag.answer.grounded import closest_titles, prompt_messages, refusal, stream_answer
from rag.answer.judge import JudgedScore, ask as ask_judge, closeness
from rag.answer.reviews import review_sources, reviewed_papers
from rag.answer.support import Similarity
from rag.answer.types import Answer
from rag.corpus.papers import LoadReport, Paper, load_corpus, load_file
from rag.corpus.reviews import Review, ReviewStore, load_scores, scores_path
from rag.errors import EmptyIndexError, IndexError_, ModelError, PaperChatError
from rag.explore.similar import SimilarResult, similar
from rag.explore.topics import TopicMap, ensure_map
from rag.index.snapshot import Snapshot, read_snapshot, snapshot_path, write_snapshot
from rag.index.store import IngestStats, PaperIndex, ProgressFn, make_client
from rag.models.embeddings import SentenceSimilarity
from rag.models.local_llm import LocalModelServer
from rag.models.slots import FairGate, Ticket
from rag.models.speed import ReadRate
from rag.offline import prepare_offline
from rag.prompts import (BUSY_EN, BUSY_ZH, CALIBRATION, JUDGE_INSTRUCTIONS, NO_REVIEW_SCORES, NO_REVIEWS_EN, NO_REVIEWS_ZH,
                         TRANSLATE_TERMS)
from rag.question.clean import clean_question
from rag.question.rewrite import Query, described_papers, fallback_query, referred_papers, rewrite_query
from rag.question.router import Intent, Kind, route
from rag.question.turns import Exchange, HistoryItem, exchanges
from rag.retrieve.filters import STATUS_GROUPS, Filters
from rag.retrieve.retriever import PaperRetriever
from rag.retrieve.search import Source, query_terms
from rag.settings import Settings
from rag.text import language

__all__ = [  # what callers (the UI, the CLI, benchmarks) take from here, besides settings and errors
    "Answer", "DoneEvent", "Event", "Exchange", "Filters", "Intent", "Kind", "Paper", "Pipeline", "QuoteEvent",
    "STATUS_GROUPS", "SimilarResult", "Source", "SourcesEvent", "TokenEvent", "TopicMap", "WaitEvent", "build_pipeline",
]

REWRITE_MAX_TOKENS = 80  # a search query, not an essay: bounds the model's time on it
TRANSLATE_MAX_TOKENS = 24  # a few English terms
RESTART_GRACE_S = 2.0  # after a failed call, how long a killed model server may take to be reaped
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourcesEvent:
    """The papers being read. A question the model rewrites gets two: at once from its own words, then refined."""

    sources: list[Source]
    query: Query | None = None  # what was searched (the rewritten query, when the model wrote one)
    final: bool = True  # False: a model-written query will refine these


@dataclass(frozen=True)
class QuoteEvent:
    """Built in code, shown before the model writes: the quoted abstract sentences, or a comparison's table."""

    text: str


@dataclass(frozen=True)
class WaitEvent:
    """Waiting for the model: `ahead` questions in front, or (ahead 0) reading a prompt of `prompt_tokens`,
    `estimate_s` seconds by this machine's measured speed (None before it was measured)."""

    ahead: int = 0
    estimate_s: float | None = None
    prompt_tokens: int = 0


@dataclass(frozen=True)
class TokenEvent:
    """Text the model wrote (cleaned), in order."""

    text: str


@dataclass(frozen=True)
class DoneEvent:
    answer: Answer


Event = SourcesEvent | QuoteEvent | WaitEvent | TokenEvent | DoneEvent
WAIT_POLL_S = 0.5  # how often a queued question reports its place


class Pipeline:
    """Holds the index and the chat model; the model (and the embedded server) start on first use."""

    def __init__(self, settings: Settings, index: PaperIndex, llm: BaseChatModel | None = None,
                 similarity: Similarity | None = None, judged: JudgedScore | None = None):
        self.settings = settings
        self.index = index
        self.judged = judged  # the model's yes/no weighed with the decline score (rag.answer.judge), or None
        # the claim check's multilingual reading of Chinese sentences (multilingual-e5-small unless a test's fake)
        self.similarity = similarity or SentenceSimilarity()
        self.retriever = PaperRetriever(index=index, settings=settings.retrieval)
        self._llm = llm
        self._server: LocalModelServer | None = None
        self._lock = threading.Lock()
        self._areas: list[str] | None = None  # primary areas in the index, read once, reset by ingest
        self._papers: list[Paper] | None = None  # every indexed paper's record, for counting; reset by ingest
        self._reviews: ReviewStore | None = None
        # One model, a bounded first-come, first-served queue in front of it; everything before the model
        # (sources, quotes, tables, counts) is served to every user at once, outside it.
        self.slots = FairGate(settings.ui.answer_slots, settings.ui.max_waiting)
        self.read_rate = ReadRate()
        self._encoding: tiktoken.Encoding | None = None

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
        """Start the model now rather than on the first question, and measure how fast it reads a prompt (the
        first waiting user is told a true estimate). The index is opened too, and its primary areas read (the
        router's list): the first question's sources waited 2.3 s for them (benchmarks/README.md, latency)."""
        if self.index.count_chunks():
            self.areas()
            self.retrieve("warm up")
        once = self.llm.bind(max_tokens=1)
        once.invoke([HumanMessage("Hi")])  # the server's first call is slow (page faults, graph set-up): not timed
        prompt = [HumanMessage(CALIBRATION)]
        t0 = time.perf_counter()
        once.invoke(prompt)
        self.read_rate.observe(self.count_tokens(prompt), time.perf_counter() - t0)

    def count_tokens(self, messages: Sequence) -> int:
        """A prompt's size in cl100k tokens (the unit the read rate is measured in, whatever the model)."""
        if self._encoding is None:
            self._encoding = tiktoken.get_encoding("cl100k_base")
        return sum(len(self._encoding.encode(str(m.content), disallowed_special=())) for m in messages)

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- corpus and index ----------------------------------------------------------------------
    def ingest_files(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                     notice: Callable[[str], None] = lambda text: None) -> tuple[LoadReport, IngestStats]:
        """Load corpus files into the index. A file's index snapshot (`corpus/<name>.index.npz`) gives the vectors
        of its unchanged papers when it was made by this index's embedder and chunking; its review scores
        (`corpus/<name>.scores.csv.gz`) go into the reviews store. `notice` hears what is happening."""
        report, total, seen = LoadReport(), IngestStats(), set()
        for path in paths:
            before = len(report.papers)
            load_file(path, report, seen)
            papers = report.papers[before:]
            snapshot = self._snapshot_for(path, papers, notice)
            stats = self.index.ingest(papers, progress=progress, snapshot=snapshot)
            for name in ("papers_new", "papers_changed", "papers_unchanged", "chunks_written", "chunks_from_snapshot"):
                setattr(total, name, getattr(total, name) + getattr(stats, name))
            scores = scores_path(path)
            if scores.is_file():
                self.review_store(create=True).add_scores(load_scores(scores))
        self._areas = self._papers = None
        return report, total

    def _snapshot_for(self, path: str | Path, papers: Sequence[Paper], notice: Callable[[str], None]) -> Snapshot | None:
        """The corpus file's snapshot when it fits this index, saying what will happen either way."""
        found = read_snapshot(snapshot_path(path))
        if found is None:
            return None
        if found.identity != self.index.identity:
            notice(f"{snapshot_path(path).name} was made with {found.identity['embedding']} (chunks of "
                   f"{found.identity['chunk_size']}), not {self.index.identity['embedding']} (chunks of "
                   f"{self.index.identity['chunk_size']}): every paper is embedded instead.")
            return None
        known = found.papers()
        fresh = sum(known.get(p.id) != p.content_hash() for p in papers)
        notice(f"{len(papers) - fresh:,} of {len(papers):,} papers load from {snapshot_path(path).name}"
               + (f"; {fresh:,} new or changed ones are embedded." if fresh else "."))
        return found

    def snapshot(self, corpus: str | Path) -> tuple[Path, bool]:
        """Write the snapshot of a corpus file's papers from this index (ingest the file first); returns its path
        and whether anything changed."""
        report = load_corpus([corpus])
        indexed = self.index.paper_ids()
        missing = [p.id for p in report.papers if p.id not in indexed]
        if missing:
            raise PaperChatError(f"{len(missing):,} papers of {corpus} are not in the index (e.g. {missing[0]}): "
                                 f"run `paperchat ingest {corpus}` first.")
        path = snapshot_path(corpus)
        return path, write_snapshot(path, self.index.snapshot(p.id for p in report.papers))

    def prune(self, keep_ids) -> int:
        removed = self.index.prune(keep_ids)
        self._areas = self._papers = None
        return removed

    def ensure_ingested(self, progress: ProgressFn | None = None,
                        notice: Callable[[str], None] = lambda text: None) -> tuple[LoadReport, IngestStats] | None:
        """On first start, ingest the configured corpus (ICLR 2026, from its snapshot, by default)."""
        if not self.index.is_empty():
            return None
        return self.ingest_files(self.settings.corpus, progress=progress, notice=notice)

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

    def retrieve(self, queries: str | Sequence[str], filters: Filters | None = None, k: int | None = None,
                 referred: Sequence[str] = (), described: Sequence[str] = ()) -> list[Source]:
        with self._store():
            if self.index.is_empty():
                raise EmptyIndexError("No papers are indexed yet: run `paperchat ingest corpus/iclr2026_seed.jsonl` first.")
            return self.retriever.papers(queries, filters or Filters(), k, referred, described)

    def judges(self, intent: Intent, turns: Sequence[Exchange] = ()) -> bool:
        """Is this question put to the model's yes/no (rag.answer.judge)? A first lookup, when it is fitted for
        this embedder and chat model: what it was fitted and measured on. A comparison is not asked: "how does DroPE
        differ from LookaheadKV?" with both papers before it got P(yes) 0.53 (abstracts rarely compare themselves);
        nor a follow-up ("its limits?"), which was not measured."""
        return self.judged is not None and not turns and intent.kind is Kind.LOOKUP and not intent.papers

    def coverage(self, intent: Intent, query: Query, sources: Sequence[Source],
                 filters: Filters | None = None, turns: Sequence[Exchange] = ()) -> Coverage | None:
        """Whether the sources can answer (rag.answer.coverage): names from the question as written, key terms
        from English text (the translation, or the glossary's terms, for a question in another language). A
        question the model's yes/no will weigh too is declined here under the lower threshold fitted with it
        (`JudgedScore.before`), unless a threshold is set."""
        if not self.settings.retrieval.coverage_check:
            return None
        score = self.settings.embedding.decline_score()
        if score is not None and self.settings.embedding.decline_threshold is None and self.judges(intent, turns):
            score = replace(score, threshold=self.judged.before)
        # the model's standalone English query when there is one (a translation, a follow-up with "it" resolved),
        # else the question's English text (its own English words, and for another language the glossary's terms)
        rewritten = query.rewritten and language(query.text) == "en"
        # (an English question's `english` is the question without the words its status filter took: without_fate; a
        # Chinese one's is its English words and the glossary's terms, as it was searched: read as written, with its
        # Chinese, "有没有关于multi-agent reinforcement learning的论文？" had no English text to judge and was declined)
        english = [query.text] if rewritten else [intent.english]
        text = english[0] or query.text

        def nearest() -> list[tuple[str, float]]:  # the dense search's top papers, under the same filters
            return _papers(self.index.search(text, k=4 * AGREEMENT_TOP, filters=filters))

        def lexical_top() -> list[str]:
            return [pid for pid, _ in _papers(self.index.lexical_search(text, 4 * AGREEMENT_TOP, filters))]

        with self._store():
            return coverage(english, sources, self.index.lexical.document_frequency, self.index.lexical.count(),
                            names_from=[intent.question], nearest=nearest, lexical_top=lexical_top, rewritten=rewritten,
                            comparison=intent.kind is Kind.COMPARE, score=score)

    def stream(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None,
               k: int | None = None, pinned: Sequence[str] = ()) -> Iterator[Event]:
        """Sources first (searched at once, without the model), then what code builds (quotes, a table, a
        count), then the model's text, then the final answer.

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
            elif intent.kind is Kind.REVIEW:
                yield from self._review_answer(intent, turns, chosen, k)
            else:
                yield from self._answer(intent, turns, chosen, k)
        except ModelError as exc:
            if self._restart_if_dead():
                raise ModelError("The embedded model stopped while answering; it is being restarted. "
                                 "Ask again in a few seconds.") from exc
            raise

    def _wait_for_model(self) -> Iterator[Event]:
        """Queue for the model, reporting the place; returns the admitted ticket, or None when the queue is full."""
        ticket = self.slots.enter()
        if ticket is None:
            return None
        try:
            while not ticket.wait(WAIT_POLL_S):
                yield WaitEvent(ahead=ticket.ahead() + 1)
        except BaseException:  # Stop while waiting (the stream was closed): leave the queue
            ticket.release()
            raise
        return ticket

    def _first_query(self, intent: Intent, turns: Sequence[Exchange]) -> tuple[Query, bool]:
        """What to search at once (the question's own words; no model), and whether the model will refine it."""
        refine = self.settings.retrieval.rewrite == "auto" and bool(intent.rewrite)
        text = fallback_query(intent, turns)
        return Query(text, False, intent.rewrite and "as written", referred=referred_papers(intent, turns),
                     described=described_papers(intent, text)), refine

    def _lead(self, intent: Intent, query: Query, sources: Sequence[Source]) -> tuple[str, Extract | None, Comparison | None]:
        """What code shows before the model: a comparison's table, or the best sentence of the top papers."""
        if intent.kind is Kind.COMPARE:
            table = build_comparison([intent.question, *query.all], sources, intent.compare_count, intent.chinese)
            return (table.markdown(), None, table) if table else ("", None, None)
        extract = quote(sources, query_terms(self.index, query.all), intent.chinese)
        return extract.markdown(), (extract or None), None

    def _answer(self, intent: Intent, turns: Sequence[Exchange], filters: Filters, k: int | None) -> Iterator[Event]:
        """A lookup or a comparison (see `stream`)."""
        query, refine = self._first_query(intent, turns)
        refine = refine and not intent.papers
        sources = (self.retriever.named(intent.papers) if intent.papers
                   else self.retrieve(query.all, filters, k, query.referred, query.described))
        yield SourcesEvent(sources, query, final=not refine)
        ticket: Ticket | None = None
        early = ""
        try:
            if refine:
                # quotes from the first sources at once, while the model's query is awaited (they are replaced after)
                first = None if intent.papers else self.coverage(intent, query, sources, filters, turns)
                if sources and (first is None or first.answerable):
                    early = self._lead(intent, query, sources)[0]
                    if early:
                        yield QuoteEvent(early)
                ticket = yield from self._wait_for_model()
                if ticket is not None:
                    query = self.search_query(intent, turns)
                    sources = self.retrieve(query.all, filters, k, query.referred, query.described)
                    yield SourcesEvent(sources, query)
            cover = None if intent.papers else self.coverage(intent, query, sources, filters, turns)
            if not sources or cover is not None and not cover.answerable:
                declined = refusal(intent, sources, cover)
                if early:
                    yield QuoteEvent("")  # the early quotes do not stand next to a refusal
                yield TokenEvent(declined.text)
                yield DoneEvent(declined)
                return
            lead, extract, comparison = self._lead(intent, query, sources)
            if lead or early:
                yield QuoteEvent(lead)
            if ticket is None:
                ticket = yield from self._wait_for_model()
            if ticket is None:  # the queue is full: the quotes are the answer
                if self.judges(intent, turns) and self._judged_declines(cover):  # no yes/no to weigh: the score alone
                    yield from self._declined(intent, sources, cover, lead)
                    return
                yield DoneEvent(self._busy_answer(intent, sources, lead, extract, comparison))
                return
            yield from self._write(intent, sources, turns, lead, extract, comparison, cover, query)
        finally:
            if ticket is not None:
                ticket.release()

    def _write(self, intent: Intent, sources: Sequence[Source], turns: Sequence[Exchange], lead: str = "",
               extract: Extract | None = None, comparison: Comparison | None = None,
               cover: Coverage | None = None, query: Query | None = None) -> Iterator[Event]:
        """The model's part (the caller holds a model slot): the estimate; for a question the decline score weighed,
        the model's yes/no on whether the sources answer it, weighed with the score and how close `query` is to the
        sources' best sentences (rag.answer.judge), which may decline it; then the model's text and the final
        answer."""
        shown = comparison.papers if comparison else sources
        prompt = self.count_tokens(prompt_messages(intent, shown, turns))
        yield WaitEvent(0, self.read_rate.estimate(prompt), prompt)
        judged = (self.judged if cover is not None and cover.probability is not None and self.judges(intent, turns)
                  else None)
        read = False  # the prompt's shared part was read by the yes/no call: the answer's first token is no rate
        if judged is not None:
            messages = prompt_messages(intent, shown, turns, JUDGE_INSTRUCTIONS)
            t0 = time.perf_counter()
            try:
                said = ask_judge(self.llm, messages)
                self.read_rate.observe(self.count_tokens(messages), time.perf_counter() - t0)
                read = True
            except Exception as exc:  # the answer's own call then meets the same fault and says what to do
                log.warning("the model's yes/no on the sources failed (%s); answering without it", exc.__class__.__name__)
                said = None
            close = self.closeness(query, sources) if said is not None and query is not None and judged.closeness else 0.0
            if self._judged_declines(cover, said, close):
                yield from self._declined(intent, sources, cover, lead)
                return
        t0 = time.perf_counter()

        def first_token() -> None:
            if not read:
                self.read_rate.observe(prompt, time.perf_counter() - t0)

        for item in stream_answer(intent, sources, self.llm, turns, lead, extract, comparison,
                                  first_token=first_token, similarity=self.similarity):
            yield DoneEvent(item) if isinstance(item, Answer) else TokenEvent(item)

    def closeness(self, query: Query, sources: Sequence[Source]) -> float:
        """How close the English search text is to the sources' best sentences (rag.answer.judge.closeness)."""
        return closeness(query.text, sources, query_terms(self.index, query.all), self.similarity)

    def _judged_declines(self, cover: Coverage | None, said: float | None = None, close: float = 0.0) -> bool:
        """`JudgedScore.declines` for a question the decline score kept only for the yes/no to weigh: with P(yes)
        `said` and the closeness, or without a verdict (None) by the decline score at its own threshold."""
        if self.judged is None or cover is None or cover.probability is None:
            return False
        own = self.settings.embedding.decline_score()
        return self.judged.declines(cover.probability, said, close, alone=own.threshold if own is not None else None)

    def _declined(self, intent: Intent, sources: Sequence[Source], cover: Coverage, lead: str) -> Iterator[Event]:
        """Decline a question the yes/no weighed (or would have): the quotes shown are taken back."""
        declined = refusal(intent, sources, cover, by="judge")
        if lead:
            yield QuoteEvent("")  # the quotes do not stand next to a refusal
        yield TokenEvent(declined.text)
        yield DoneEvent(declined)

    def _busy_answer(self, intent: Intent, sources: Sequence[Source], lead: str, extract: Extract | None,
                     comparison: Comparison | None) -> Answer:
        """When the model's queue is full: what code built, said to be all there is this time."""
        note = (BUSY_ZH if intent.chinese else BUSY_EN).format(waiting=self.slots.load()[1])
        cited = [s for s in sources if s.n in (extract.cited if extract else [])] or (
            list(comparison.papers) if comparison else [])
        return Answer(intent.question, f"{lead}\n\n{note}" if lead else note, list(sources),
                      [to_citation(s) for s in cited], extract=extract, comparison=comparison, lead=lead,
                      kind=intent.kind.value, refusal="" if lead else "busy")

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

    def _review_answer(self, intent: Intent, turns: Sequence[Exchange], filters: Filters,
                       k: int | None) -> Iterator[Event]:
        """A question about the reviews, answered from the papers' official reviews, labeled as such."""
        query, refine = self._first_query(intent, turns)
        k = k or self.settings.retrieval.k
        chars = self.settings.retrieval.max_source_tokens * 4

        def found(q: Query) -> tuple[list[Source], list[Source]]:
            papers = reviewed_papers(intent, q.all, lambda queries, n: self.retrieve(queries, filters, n), k)
            return papers, review_sources(self.review_store(), intent, papers, chars)

        papers, reviews = found(query)
        yield SourcesEvent(reviews or papers, query, final=not refine)
        ticket: Ticket | None = None
        try:
            if refine:
                ticket = yield from self._wait_for_model()
                if ticket is not None:
                    query = self.search_query(intent, turns)
                    papers, reviews = found(query)
                    yield SourcesEvent(reviews or papers, query)
            if not reviews:
                text = (NO_REVIEWS_ZH if intent.chinese else NO_REVIEWS_EN).format(titles=closest_titles(papers))
                yield TokenEvent(text)
                yield DoneEvent(Answer(intent.question, text, papers, refusal="code", kind=intent.kind.value))
                return
            if ticket is None:
                ticket = yield from self._wait_for_model()
            if ticket is None:
                yield DoneEvent(self._busy_answer(intent, reviews, "", None, None))
                return
            yield from self._write(intent, reviews, turns)
        finally:
            if ticket is not None:
                ticket.release()

    def ask(self, question: str, history: Sequence[HistoryItem] = (), filters: Filters | None = None,
            k: int | None = None) -> Answer:
        for event in self.stream(question, history, filters, k):
            if isinstance(event, DoneEvent):
                return event.answer
        raise AssertionError("stream ended without an answer")


def _papers(chunks: Sequence[tuple[Document, float]]) -> list[tuple[str, float]]:
    """Chunks best first -> each paper once, at its best chunk's score."""
    best: dict[str, float] = {}
    for doc, score in chunks:
        best.setdefault(doc.metadata["paper_id"], score)
    return list(best.items())


def build_pipeline(settings: Settings, embeddings: Embeddings | None = None,
                   llm: BaseChatModel | None = None) -> Pipeline:
    """Wire the stages from settings; tests pass fakes for `embeddings` and `llm` (a fake embedder also stands in
    for the claim check's multilingual one, with a floor of 0: its cosines mean nothing; a given `llm` is not known
    to be the bundled model, so its yes/no is not asked: rag.answer.judge)."""
    prepare_offline(settings.cache_dir)
    similarity = None
    if embeddings is None:
        from rag.models.embeddings import make_embeddings

        embeddings = make_embeddings(settings.embedding)
    else:
        similarity = SentenceSimilarity(embeddings, floor=0.0)
    index = PaperIndex(make_client(settings), embeddings, settings)
    return Pipeline(settings, index, llm, similarity, settings.judged_score() if llm is None else None)

