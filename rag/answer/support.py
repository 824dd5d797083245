"""After the model: is each sentence supported by what it cites?

`check_sentences` scores each sentence against the abstracts it cites: the share of its content words
found there (lexical evidence), and its key terms: every number and every coined name in it ("FPGAs",
"Qwen2", "LookaheadKV") must appear there, whatever the overlap of its other words. A Chinese sentence is read
through its English words and the glossary's English for its Chinese terms. An uncited sentence is judged on
its key terms against all the sources: a name or number that none of them holds is unsupported.
A Chinese sentence is also compared, by a multilingual embedder (`Similarity`), with the sentences of what it cites:
under the embedder's floor it is unsupported, whatever its English words (a claim of another paper given to this one
keeps the topic's English terms). `attribute_uncited` gives a restated-but-uncited sentence its source;
`drop_extra_citations` takes out markers of papers that hold almost none of a sentence's words; `echoes` catches a
recited prompt.
Thresholds are measured on hand-labeled sentences (benchmarks/README.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from rag.corpus.papers import Paper
from rag.question.glossary import gloss
from rag.retrieve.search import Source
from rag.text import abstract_sentences, cited_numbers, coined_names, content_words, has_cjk, latin_words, numbers, \
    share_held, split_sentences, states_absence, without_citations, word_set, words

MIN_SUPPORT = 0.5  # share of a sentence's content words that its cited abstracts must hold
MIN_SHARE_PER_SOURCE = 0.25  # a sentence citing several sources: each must hold this share of its words
ATTRIBUTE_SUPPORT = 0.8  # an uncited sentence this well supported by one source gets that source's [n]
# Words of sentences that point at sources rather than claim anything ("This is described in [1].").
META_WORDS = frozenset("""retrieved provide provides provided detailed detail details information described
describes discussed discusses mentioned source sources approach topic question covered cover covers found see
refer refers presented presents introduced introduces proposed relevant related following""".split())


class Similarity(Protocol):
    """A claim's cosine to the closest of some sentences, in any language; a `question` is embedded as a search
    query (rag.models.embeddings.SentenceSimilarity)."""

    floor: float  # under this, the claim is not supported by those sentences

    def __call__(self, text: str, sentences: list[str], question: bool = False) -> float: ...


@dataclass(frozen=True)
class SentenceCheck:
    text: str
    cited: tuple[int, ...]
    supported: bool | None  # None: not checked (cites nothing, claims nothing, or too few English words)
    support: float  # share of content words found in the cited abstracts
    missing_numbers: tuple[str, ...] = ()
    attributed: bool = False  # its citation was added by code (rag.answer.support.attribute_uncited), not the model
    missing_names: tuple[str, ...] = ()  # coined names of the sentence that what it cites never mentions
    closeness: float | None = None  # a Chinese sentence: multilingual cosine to the closest sentence it cites
    uncited: bool = False  # a claim (3 content words or more, not a statement of absence) that cites no source

    def to_json(self) -> dict:
        return asdict(self)


def _evidence(source: Source) -> str:
    if source.review_id:  # a review supports only what the review says
        return f"{source.paper.title}. {source.text}"
    # what the model read (prompts.SOURCE_TEMPLATE), and the paper's id: a sentence that copies its header
    # ("(Poster, id NAORIWBaoO)" before the id left the prompt) claims nothing the evidence lacks
    return f"{source.paper.title} ({source.paper.status}, id {source.paper.id}). {source.paper.abstract} {source.text}"


def _claim_words(sentence: str) -> list[str]:
    """The sentence's content words that can be looked up in English abstracts: its English words, and for
    Chinese text the glossary's English for its terms ("KV缓存压缩" -> kv, cache, compression)."""
    body = without_citations(sentence)
    if not has_cjk(body):
        return latin_words(body)
    return latin_words(gloss(body).english)


_ACRONYM = re.compile(r"(?<![A-Za-z0-9])[A-Z]{3,6}(?=s?(?![A-Za-z0-9]))")  # FPGA, TPU, LLM (plural: FPGAs)


def _spelled_out(acronym: str, evidence: str) -> bool:
    """Is the acronym written out in the evidence ("LLM": "large language model")?"""
    initials = "".join(w[0] for w in words(evidence) if w[0].isalpha())
    return acronym.lower() in initials


def _missing_names(body: str, evidence: str) -> tuple[str, ...]:
    """Key names of the sentence that the evidence never mentions: coined names ("Qwen2", "LookaheadKV") and
    acronyms ("FPGA"; a plural "FPGAs" is found as "FPGA"; an acronym the evidence spells out is held)."""
    held = evidence.lower()
    missing = [n for n in coined_names(body) if n.lower() not in held and n.lower().rstrip("s") not in held]
    missing += [a for a in _ACRONYM.findall(body) if a.lower() not in held and not _spelled_out(a, evidence)]
    once: dict[str, str] = {}
    for name in missing:  # "TPUs" (a coined-name match) and "TPU" (an acronym match) are one name
        once.setdefault(name.lower().rstrip("s"), name)
    return tuple(once.values())


def _weak_sources(words: Sequence[str], cited: Sequence[int], by_n: dict[int, Source]) -> set[int]:
    """The cited sources holding under MIN_SHARE_PER_SOURCE of `words`: a wrong extra citation."""
    return {n for n in cited if share_held(words, word_set(_evidence(by_n[n]))) < MIN_SHARE_PER_SOURCE}


def _missing_numbers(body: str, evidence: str, cited: Sequence[int] = ()) -> tuple[str, ...]:
    held = set(numbers(evidence))
    return tuple(n for n in dict.fromkeys(numbers(body)) if n not in held and n not in {str(c) for c in cited})


def sentences_of(paper: Paper) -> list[str]:
    """What a paper says, sentence by sentence: its title and its abstract's sentences."""
    return [paper.title, *abstract_sentences(paper.abstract)]


def _sentences(source: Source) -> list[str]:
    """What a cited source says, sentence by sentence (a review: the review's text)."""
    return split_sentences(source.text) if source.review_id else sentences_of(source.paper)


def check_sentence(sentence: str, by_n: dict[int, Source], similarity: Similarity | None = None) -> SentenceCheck:
    """Does what the sentence cites hold its words and key terms? Unsupported when a number or a coined name
    of the sentence is in none of the cited abstracts, when under MIN_SUPPORT of its content words are in them
    together, or when one of several cited abstracts holds almost none of them (a wrong extra citation).
    A Chinese sentence, with `similarity`, is also unsupported under its floor (see the module docstring), and
    judged by it alone when it has too few English words to count.
    An uncited sentence is judged only on its key terms, against all the sources (one saying something is
    absent, "no paper uses FPGAs", is not a claim about them)."""
    cited = tuple(dict.fromkeys(n for n in cited_numbers(sentence) if n in by_n))
    body = without_citations(sentence)
    if not cited:
        everything = " ".join(_evidence(s) for s in by_n.values())
        names, missing = _missing_names(body, everything), _missing_numbers(body, everything)
        claim = len(content_words(body)) >= 3 and not states_absence(body)
        if by_n and (names or missing) and claim:
            return SentenceCheck(sentence, (), False, 0.0, missing, missing_names=names, uncited=True)
        return SentenceCheck(sentence, (), None, 0.0, uncited=claim)
    evidence = " ".join(_evidence(by_n[n]) for n in cited)
    latin = _claim_words(sentence)
    support = share_held(latin, word_set(evidence))
    missing = _missing_numbers(body, evidence, cited)
    names = _missing_names(body, evidence)
    close = (round(similarity(body, [s for n in cited for s in _sentences(by_n[n])]), 3)
             if similarity is not None and has_cjk(body) else None)
    if missing or names:
        return SentenceCheck(sentence, cited, False, round(support, 3), missing, missing_names=names, closeness=close)
    if close is not None and close < similarity.floor:
        return SentenceCheck(sentence, cited, False, round(support, 3), closeness=close)
    if len([w for w in latin if w not in META_WORDS]) < 2 and not has_cjk(body):
        return SentenceCheck(sentence, cited, None, round(support, 3))  # points at a source, claims nothing
    if len(latin) < 3 and has_cjk(body):
        # a Chinese sentence with fewer than 3 English or glossary terms gives no lexical evidence either way: the
        # multilingual similarity, when there is one, is the judge
        return SentenceCheck(sentence, cited, None if close is None else True, round(support, 3), closeness=close)
    if len(cited) > 1 and _weak_sources(latin, cited, by_n):
        return SentenceCheck(sentence, cited, False, round(support, 3), closeness=close)
    return SentenceCheck(sentence, cited, support >= MIN_SUPPORT, round(support, 3), closeness=close)


def check_sentences(text: str, sources: Sequence[Source], attributed: Sequence[str] = (),
                    similarity: Similarity | None = None) -> list[SentenceCheck]:
    by_n = {s.n: s for s in sources}
    checks = [check_sentence(s, by_n, similarity) for s in split_sentences(text)]
    return [SentenceCheck(**{**asdict(c), "attributed": True}) if c.text in attributed else c for c in checks]


def attribute_uncited(text: str, sources: Sequence[Source]) -> tuple[str, list[str], list[int]]:
    """Give an uncited sentence the [n] of the one source that holds nearly all its words (and numbers).

    Small models often restate an abstract without citing it; this keeps "every claim cited" true without
    trusting the model. Returns (text, the sentences as now cited, source numbers added in order)."""
    done, added = [], []
    for sentence in split_sentences(text):
        if cited_numbers(sentence) or len(content_words(without_citations(sentence))) < 4:
            continue
        marked = [(check_sentence(f"{sentence} [{s.n}]", {s.n: s}), s.n) for s in sources]
        good = [(c.support, n) for c, n in marked if c.supported and c.support >= ATTRIBUTE_SUPPORT]
        if not good:
            continue
        n = max(good)[1]
        cited = re.sub(r"([.!?。！？])$", rf" [{n}]\1", sentence) if re.search(r"[.!?。！？]$", sentence) else f"{sentence} [{n}]"
        text = text.replace(sentence, cited, 1)
        done.append(cited)
        added.append(n)
    return text, done, added


_MARKER_RUN = re.compile(r"(\s*)(\[\d{1,3}\](?:\s*,?\s*\[\d{1,3}\])*)")


def drop_extra_citations(text: str, sources: Sequence[Source]) -> tuple[str, list[int]]:
    """Remove from a sentence citing several sources the markers of those that hold almost none of its words
    (under MIN_SHARE_PER_SOURCE), when the others still support it: "... extends the context [1], [2], [3]"
    where [2] and [3] are about something else becomes "... extends the context [1]". A sentence nothing
    supports is left as written, for check_sentences to flag. Returns (text, source numbers removed)."""
    by_n = {s.n: s for s in sources}
    removed: list[int] = []
    for sentence in split_sentences(text):
        check = check_sentence(sentence, by_n)
        if len(check.cited) < 2:
            continue
        weak = _weak_sources(_claim_words(sentence), check.cited, by_n)
        if not weak or len(weak) == len(check.cited):
            continue

        def keep(m: re.Match) -> str:
            kept = [n for n in cited_numbers(m.group(2)) if n not in weak]
            if not kept:
                return ""
            return m.group(1) + (", " if "," in m.group(2) else "").join(f"[{n}]" for n in kept)

        pruned = _MARKER_RUN.sub(keep, sentence)
        pruned = re.sub(r"\s+([.!?。！？])", r"\1", pruned)  # "context ." after a run went away
        if check_sentence(pruned, by_n).supported:
            text = text.replace(sentence, pruned, 1)
            removed += [n for n in check.cited if n in weak and n not in removed]
    return text, removed


def echoes(text: str, secret_texts: Sequence[str], run: int = 8) -> bool:
    """True when `text` repeats `run` consecutive words of any of `secret_texts` (e.g. the prompt)."""
    spoken = words(text)
    said = {tuple(spoken[i:i + run]) for i in range(len(spoken) - run + 1)}
    for secret in secret_texts:
        w = words(secret)
        if any(tuple(w[i:i + run]) in said for i in range(len(w) - run + 1)):
            return True
    return False
