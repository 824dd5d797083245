"""The grounded answer: the model reads numbered sources and writes a cited answer, streamed; plain
code then cleans its citations and checks every sentence against what it cites (rag.answer.support)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from rag.answer.citations import CitationFilter, to_citation
from rag.answer.compare import Comparison
from rag.answer.coverage import Coverage
from rag.answer.extract import Extract
from rag.answer.support import Similarity, attribute_uncited, check_sentences, drop_extra_citations, echoes
from rag.answer.types import Answer
from rag.errors import ModelError
from rag.prompts import (
    ANSWER_SENTENCES,
    ANSWER_TEMPLATE,
    CANNOT_ANSWER,
    CANNOT_ANSWER_ZH,
    CLOSEST_EN,
    CLOSEST_ZH,
    COMPARE_INSTRUCTIONS_EN,
    COMPARE_INSTRUCTIONS_ZH,
    COMPARE_SENTENCES,
    INSTRUCTIONS_EN,
    INSTRUCTIONS_ZH,
    JUDGE_WHY_EN,
    JUDGE_WHY_ZH,
    RARE_TERMS_WHY_EN,
    RARE_TERMS_WHY_ZH,
    REVIEW_INSTRUCTIONS_EN,
    REVIEW_INSTRUCTIONS_ZH,
    REVIEW_SENTENCES,
    REVIEW_SOURCE_TEMPLATE,
    REFUSAL_EN,
    TITLES_ONLY_EN,
    TITLES_ONLY_ZH,
    REFUSAL_ZH,
    SOURCE_TEMPLATE,
    SYSTEM_PROMPT,
    UNKNOWN_NAME_WHY_EN,
    UNKNOWN_NAME_WHY_ZH,
)
from rag.question.router import Intent, Kind
from rag.question.turns import HistoryItem, exchanges
from rag.retrieve.search import Source
from rag.text import content_words, han_characters, split_sentences, states_absence, without_citations

# What an answer must never repeat: the instructions (an abstract or a question may ask for them).
PRIVATE_PROMPTS = (SYSTEM_PROMPT, INSTRUCTIONS_EN, INSTRUCTIONS_ZH, COMPARE_INSTRUCTIONS_EN, COMPARE_INSTRUCTIONS_ZH,
                   REVIEW_INSTRUCTIONS_EN, REVIEW_INSTRUCTIONS_ZH)

ANSWER_PROMPT = ChatPromptTemplate.from_messages(
    [("system", SYSTEM_PROMPT), MessagesPlaceholder("history"), ("human", ANSWER_TEMPLATE)]
)
MAX_HISTORY_TURNS = 2  # earlier turns cost prefill time on a CPU and rarely matter
HISTORY_ANSWER_CHARS = 1_200  # an earlier answer (a comparison table included) is cut here in the prompt


def format_source(s: Source) -> str:
    if s.review_id:
        return REVIEW_SOURCE_TEMPLATE.format(n=s.n, review_id=s.review_id, title=s.paper.title,
                                             scores=s.review_scores or "no scores", text=s.text)
    return SOURCE_TEMPLATE.format(n=s.n, title=s.paper.title, status=s.paper.status or "status unknown",
                                  text=s.text)


def format_sources(sources: Sequence[Source]) -> str:
    return "\n\n".join(format_source(s) for s in sources)


def history_messages(history: Sequence[HistoryItem]) -> list[BaseMessage]:
    """Earlier turns as chat messages, most recent last; an answer names the papers its [n] meant."""
    messages: list[BaseMessage] = []
    for turn in exchanges(history)[-MAX_HISTORY_TURNS:]:
        shown = "; ".join(f"[{i}] {title}" for i, title in enumerate(turn.papers, start=1))
        earlier = turn.answer if len(turn.answer) <= HISTORY_ANSWER_CHARS else turn.answer[:HISTORY_ANSWER_CHARS] + " …"
        messages += [HumanMessage(turn.question), AIMessage(earlier + (f"\n(Papers: {shown})" if shown else ""))]
    return messages


def instructions_for(intent: Intent) -> str:
    """The closing instructions for the kind of question, in its language (Chinese gets Chinese ones: the small
    embedded model then answers in Chinese)."""
    zh = intent.chinese
    if intent.kind is Kind.REVIEW:
        return REVIEW_INSTRUCTIONS_ZH if zh else REVIEW_INSTRUCTIONS_EN
    if intent.kind is Kind.COMPARE:
        return COMPARE_INSTRUCTIONS_ZH if zh else COMPARE_INSTRUCTIONS_EN
    return INSTRUCTIONS_ZH if zh else INSTRUCTIONS_EN


def prompt_inputs(intent: Intent, sources: Sequence[Source], history: Sequence[HistoryItem] = (),
                  instructions: str | None = None) -> dict:
    return {
        "sources": format_sources(sources),
        "question": intent.question.strip(),
        "instructions": instructions_for(intent) if instructions is None else instructions,
        "history": history_messages(history),
    }


def closest_titles(sources: Sequence[Source], n: int = 3) -> str:
    return "; ".join(f"\u201c{s.paper.title}\u201d" for s in list(sources)[:n])


def refusal_text(intent: Intent, sources: Sequence[Source], cover: Coverage, by: str = "code") -> str:
    """The plain "not covered" answer, in the question's language, with why (what decided: `by` the coverage
    check's names or key terms, or the model's yes/no) and the closest papers."""
    zh = intent.chinese
    if by == "judge":
        why = JUDGE_WHY_ZH if zh else JUDGE_WHY_EN
    elif cover.unknown_names:
        why = (UNKNOWN_NAME_WHY_ZH if zh else UNKNOWN_NAME_WHY_EN).format(names=", ".join(cover.unknown_names))
    elif cover.missing_terms:
        why = (RARE_TERMS_WHY_ZH if zh else RARE_TERMS_WHY_EN).format(terms=", ".join(cover.missing_terms[:5]))
    else:
        why = ""
    return (REFUSAL_ZH if zh else REFUSAL_EN).format(why=why, titles=closest_titles(sources))


def _error_names(exc: BaseException) -> str:
    """The class names of an exception, its bases and its causes: SDKs wrap one error in another."""
    names, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        names += [c.__name__ for c in type(exc).__mro__]
        exc = exc.__cause__ or exc.__context__
    return " ".join(names)


def _model_error(exc: Exception) -> ModelError:
    name = _error_names(exc)
    if "RemoteProtocol" in name or "ReadError" in name:
        return ModelError("The model server closed the connection in the middle of the answer (did it stop?). Ask again.")
    if "JSONDecode" in name or "Decode" in name:
        return ModelError("The model server sent a reply that is not an OpenAI-compatible response: check "
                          "PAPERCHAT_LLM__BASE_URL points at an OpenAI-compatible /v1 endpoint.")
    if "InternalServer" in name or "ServiceUnavailable" in name:
        return ModelError("The model server answered with an error (HTTP 5xx). Try again; if it keeps failing, "
                          "check the model server's log.")
    if "Timeout" in name:
        return ModelError("The model took too long to answer. Try again, or raise PAPERCHAT_LLM__TIMEOUT_S.")
    if "Connection" in name:
        return ModelError("The model server cannot be reached. Check that it is running (or PAPERCHAT_LLM__BASE_URL), then retry.")
    if "Authentication" in name or "PermissionDenied" in name:
        return ModelError("The model server refused the API key: check OPENAI_API_KEY or PAPERCHAT_LLM__API_KEY.")
    if "NotFound" in name:
        return ModelError("The model server does not know that model: check PAPERCHAT_LLM__MODEL.")
    return ModelError(f"The model call failed ({exc.__class__.__name__}). Try again; if it keeps failing, "
                      "check the model server's log.")


def refusal(intent: Intent, sources: Sequence[Source], cover: Coverage | None = None, by: str = "code") -> Answer:
    """The plain "not covered" answer decided in code (no sources, or the coverage check said no), or `by` "judge"
    (the model's yes/no on the sources, rag.answer.judge)."""
    if not sources or cover is None:
        text = CANNOT_ANSWER_ZH if intent.chinese else CANNOT_ANSWER
    else:
        text = refusal_text(intent, sources, cover, by)
    return Answer(intent.question, text, list(sources), refusal=by, kind=intent.kind.value)


MIN_SUMMARY_WORDS = 4  # content words beyond the papers' titles that make a summary more than a list of titles
MIN_REPEAT_CHARS = 10  # a repeated sentence shorter than this ("摘要未提及", "Yes.") may be meant; a longer one is a loop


def first_repeat(text: str) -> int | None:
    """Where the model starts writing a finished sentence it already wrote (a small model's loop), or None.

    Only sentences followed by more text count, so a sentence still being written is never cut."""
    sentences = split_sentences(text)[:-1]
    seen, position = set(), 0
    for sentence in sentences:
        position = text.find(sentence, position)
        key = "".join(sentence.split())
        if len(key) >= MIN_REPEAT_CHARS and key in seen:
            return position
        seen.add(key)
        position += len(sentence)
    return None


def sentence_limit(intent: Intent) -> int:
    """The most sentences the model writes for this kind of question (its instructions say the same)."""
    return {Kind.REVIEW: REVIEW_SENTENCES, Kind.COMPARE: COMPARE_SENTENCES}.get(intent.kind, ANSWER_SENTENCES)


def past_limit(text: str, limit: int) -> int | None:
    """Where the text begins a sentence after `limit` finished ones, once that sentence has some words, or None. A
    citation marker after the last allowed sentence still belongs to it; a line without a closing stop (a title
    heading a paper's sentence) is not counted as one."""
    counted, position = 0, 0
    for sentence in split_sentences(text):
        start = text.find(sentence, position)
        position = start + len(sentence)
        body = without_citations(sentence).strip()
        if counted == limit and body:
            return start
        counted += bool(body) and body[-1] in ".!?。！？…"
    return None


def without_unfinished(prose: str) -> str:
    """The text without its last sentence when that sentence was cut off (no closing stop before its markers); a
    text that is one unfinished sentence keeps it, marked with an ellipsis."""
    sentences = split_sentences(prose)
    if not sentences:
        return prose
    last = without_citations(sentences[-1]).strip()
    if not last or last[-1] in ".!?。！？…)）\"”":
        return prose
    if len(sentences) == 1:
        return prose.rstrip() + "…"
    return prose[:prose.rfind(sentences[-1])].rstrip()


_SUBTITLE = re.compile(r"[:?!]\s|\s[\u2013\u2014-]\s")  # "Title: subtitle", "Title? Subtitle", "Title — subtitle"


def _title_forms(title: str) -> list[str]:
    """A paper's title, and its head before a subtitle when that head has two words or more (a one-word head is
    a name a real sentence may use)."""
    head = _SUBTITLE.split(title, maxsplit=1)[0].strip()
    return [title, head] if head != title and len(head.split()) >= 2 else [title]


def only_titles(prose: str, sources: Sequence[Source]) -> bool:
    """Is the model's text nothing but the papers' titles (and numbering), with no sentence about them? A title
    is found as written, without its subtitle (the model wrote "Can LLMs Reason Soundly in Law?" for "Can LLMs Reason
    Soundly in Law? Auditing Inference Patterns for Legal Judgment"), or as the model copies a source's header
    ("[n] Title (Status)", SOURCE_TEMPLATE) with the title in its own words: whatever stands before a "(Poster)" on
    its line, after the last full stop."""
    rest, named = without_citations(prose).lower(), 0
    for title in sorted({t.lower() for s in sources for t in _title_forms(s.paper.title)}, key=len, reverse=True):
        named += rest.count(title)
        rest = rest.replace(title, " ")
    statuses = {(s.paper.status or "status unknown").lower() for s in sources}
    header = re.compile(r"[^.。\n]*\((?:%s)\)" % "|".join(map(re.escape, sorted(statuses, key=len, reverse=True))))
    rest, echoed = header.subn(" ", rest)
    # a run of Chinese characters is one "word" to content_words: count about two characters a word
    return named + echoed > 0 and len(content_words(rest)) < MIN_SUMMARY_WORDS and han_characters(rest) < 2 * MIN_SUMMARY_WORDS


def prompt_messages(intent: Intent, sources: Sequence[Source], history: Sequence[HistoryItem] = (),
                    instructions: str | None = None) -> list[BaseMessage]:
    """The answer prompt; with other `instructions` (rag.answer.judge), the same prompt up to them, so a model server
    that keeps what it read (llama.cpp's prompt cache) reads only the new instructions."""
    return ANSWER_PROMPT.format_messages(**prompt_inputs(intent, sources, history, instructions))


def stream_answer(intent: Intent, sources: Sequence[Source], llm: BaseChatModel, history: Sequence[HistoryItem] = (),
                  lead: str = "", extract: Extract | None = None, comparison: Comparison | None = None,
                  first_token: Callable[[], None] = lambda: None,
                  similarity: Similarity | None = None) -> Iterator[str | Answer]:
    """Yield the model's clean answer text as it is written, then the final `Answer` (always last).

    `lead` is what was already shown above the model's text (the quoted sentences of `extract`, or the table
    of a `comparison`, whose papers are then the only ones the model reads); the final answer's text is the
    lead and the model's prose. `first_token` is called when the model's first text arrives. Every sentence
    the model writes is checked against what it cites (a Chinese one also by `similarity`, rag.answer.support)."""
    sources = list(sources)
    question, kind = intent.question, intent.kind.value
    # The prompt and the model are called as two steps, not as `ANSWER_PROMPT | llm`: closing a
    # RunnableSequence stream drains it to the end (measured: 16 s), while closing `llm.stream` closes
    # the HTTP response at once, so the model server cancels generation when the user presses Stop.
    shown = list(comparison.papers) if comparison else sources
    messages = prompt_messages(intent, shown, history)
    citations = CitationFilter(shown)
    parts: list[str] = []
    limit, ends = sentence_limit(intent), 0
    timed, cut, capped = False, None, False  # cut: where the model was stopped (a repeat, or past its sentences)
    try:
        for chunk in llm.stream(messages):
            if chunk.text and not timed:  # once, at the first text (a server may send an empty chunk at once)
                timed = True
                first_token()
            capped = capped or (chunk.response_metadata or {}).get("finish_reason") == "length"
            clean = citations.feed(str(chunk.text))
            if clean:
                parts.append(clean)
                yield clean
                if any(mark in clean for mark in ".!?。！？\n"):
                    ends += 1
                    cut = first_repeat("".join(parts))
                    if cut is not None:  # it repeats itself: stop it (closing the stream ends the generation)
                        break
                if ends >= limit:  # past the sentences asked for (a list of one line per paper): stop it there
                    cut = past_limit("".join(parts), limit)
                    if cut is not None:
                        break
    except ModelError:
        raise
    except Exception as exc:  # the SDK's errors: say what to do, never show a stack trace
        raise _model_error(exc) from exc
    tail = citations.finish() if cut is None else ""
    if tail:
        parts.append(tail)
        yield tail
    prose = "".join(parts)
    prose = (prose if cut is None else prose[:cut]).strip()  # the final text keeps one copy, its sentences
    if capped and cut is None:  # stopped at the token cap: a half sentence claims nothing whole
        prose = without_unfinished(prose)
    recited = echoes(prose, PRIVATE_PROMPTS)
    if recited:  # the model was talked into reciting its instructions: say no instead
        prose = CANNOT_ANSWER_ZH if intent.chinese else CANNOT_ANSWER
        yield "\n\n" + prose
    prose, attributed, added = attribute_uncited(prose, shown)
    prose, unsupported = drop_extra_citations(prose, shown)
    cited_n = [] if recited else sorted((n for n in dict.fromkeys([*citations.cited, *added]) if f"[{n}]" in prose),
                                        key=lambda n: prose.find(f"[{n}]"))  # as they appear
    by_n = {s.n: s for s in shown}
    if recited or not cited_n and not comparison and states_absence(prose) or not lead and only_titles(prose, shown):
        # the model found nothing (an uncited "none of the papers ...", in any wording or language; a caveat next
        # to cited claims is no refusal, nor is a comparison's uncited contrast "the first paper does not address
        # ...": its table's cells are the cited claims, from the papers code chose and checked), or wrote nothing
        # but titles: its words stand alone, with the closest papers, and nothing quoted above them is kept
        closest = "\n\n" + (CLOSEST_ZH if intent.chinese else CLOSEST_EN).format(titles=closest_titles(sources))
        if not recited:
            prose += closest
            yield closest
        yield Answer(question, prose, sources, [], citations.dropped, refusal="model", kind=kind)
        return
    listed = bool(lead) and only_titles(prose, shown)
    if listed:  # a list of titles is no summary: the quotes above are the answer
        prose = TITLES_ONLY_ZH if intent.chinese else TITLES_ONLY_EN
        cited_n = []
        yield "\n\n" + prose
    lead_n = list(extract.cited) if extract else [s.n for s in comparison.papers] if comparison else []
    cited = [to_citation(by_n.get(n) or next(s for s in sources if s.n == n))
             for n in dict.fromkeys([*lead_n, *cited_n])]
    text = f"{lead}\n\n{prose}" if lead else prose
    yield Answer(question, text, sources, cited, citations.dropped,
                 sentences=[] if listed else check_sentences(prose, shown, attributed, similarity),  # a notice, no claim
                 comparison=comparison, extract=extract,
                 lead=lead, kind=kind, unsupported_citations=[n for n in unsupported if f"[{n}]" not in prose])


def answer(intent: Intent, sources: Sequence[Source], llm: BaseChatModel, history: Sequence[HistoryItem] = (),
           lead: str = "", extract: Extract | None = None, comparison: Comparison | None = None) -> Answer:
    """The whole answer at once."""
    result = None
    for item in stream_answer(intent, sources, llm, history, lead, extract, comparison):
        result = item
    assert isinstance(result, Answer)
    return result
