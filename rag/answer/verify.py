"""Stage 4b, verify: plain-code checks around the model's answer.

Before the model is called, `coverage` asks whether the retrieved papers can answer at all: a name the
question uses that no indexed paper mentions ("TetraPrune"), or rare topic words that the best papers
never use, mean the honest answer is a refusal that lists the closest papers. After the model wrote,
`check_sentences` scores each sentence against the abstracts it cites: the share of its content words
found there (lexical evidence) and, for every number in it, whether that number appears there.
Thresholds are measured on the dev questions and hand-labeled sentences (benchmarks/README.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from rag.index.lexical import STOP_WORDS, query_terms
from rag.retrieve.search import Source

# --- answerability (before the model) -----------------------------------------------------------

# A coined name: internal capitals (TetraPrune, LookaheadKV, CirrusMoE, DroPE) or letters with digits (Qwen2).
# Bounded by any non-ASCII-alphanumeric, not \b: in "审稿人对DroPE提出" the CJK letters around the name are \w.
_NAME = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z][a-z]+[A-Z][A-Za-z]*|[A-Za-z]+[0-9][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Za-z]*)"
                   r"(?![A-Za-z0-9])")
RARE_DF = 30  # a term in at most this many chunks of the index is a topic word worth checking
MIN_RARE_COVERAGE = 0.5  # the best paper must hold at least this share of the rare words' weight...
RELEVANCE_FLOOR = 0.55  # ...or be at least this close (cosine) to the question: both must fail to decline
# Words of the question itself, not of its topic (they are rare in abstracts, so they would look like topics).
QUESTION_WORDS = frozenset("""anyone anybody someone somebody tell apart wonder wondering explain explains mean
oral orals poster posters accepted rejected withdrawn spotlight area areas iclr conference
compare compared comparing comparison contrast differ differs difference differences versus vs pinned""".split())


@dataclass(frozen=True)
class Coverage:
    answerable: bool  # when not, unknown_names or rare_terms say why (rag.answer.grounded.refusal_text words it)
    unknown_names: tuple[str, ...] = ()
    rare_terms: tuple[str, ...] = ()
    best_coverage: float = 1.0
    similarity: float | None = None  # the closest paper's cosine, when it was needed


def stem(word: str) -> str:
    """A light English stem, enough to match "hives" with "hive" and "timetables" with "timetable"."""
    for suffix in ("ies", "es", "s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def content_words(text: str) -> list[str]:
    """Every distinct lower-cased word of `text` but stop words, in order (no cap, unlike a search query)."""
    return list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS))


@lru_cache(maxsize=256)
def word_set(text: str) -> frozenset[str]:
    """Content words of `text` and their stems. Cached: every check of an answer reads the same abstracts."""
    words = content_words(text)
    return frozenset({stem(w) for w in words} | set(words))


def share_held(words: Sequence[str], have: frozenset[str]) -> float:
    """The share of `words` found (as written or stemmed) in `have`, a `word_set`."""
    return sum(1 for w in words if w in have or stem(w) in have) / len(words) if words else 0.0


def coined_names(text: str) -> list[str]:
    return list(dict.fromkeys(_NAME.findall(text)))


_TITLE_NAME = re.compile(r"\s*([^\s:][^:]{1,38}?)\s*:\s")  # "MMSI-Bench: A Benchmark ..." -> "MMSI-Bench"


def title_name(title: str) -> str:
    """The name a paper's title gives it before a colon ("DRL-STAF: A Deep ..." -> "DRL-STAF"), or "" when the
    title has none (no colon, or more than three words before it)."""
    m = _TITLE_NAME.match(title)
    return m.group(1) if m and len(m.group(1).split()) <= 3 else ""


def names_paper(question: str, title: str) -> int:
    """How closely `question` calls a paper by its title's name, as a whole token: 2 as written ("REALIGN"),
    1 in another case ("ReAlign" for "REALIGN: ...", or "csapr"), 0 not at all. Chinese letters around it are
    fine ("审稿人对CSAPR提出了哪些缺点？"); names under 3 characters are too ambiguous to count."""
    name = title_name(title)
    if len(name) < 3:
        return 0
    pattern = rf"(?<![A-Za-z0-9])(?<![A-Za-z0-9]-){re.escape(name)}(?!-?[A-Za-z0-9])"
    if re.search(pattern, question):
        return 2
    return 1 if re.search(pattern, question, re.IGNORECASE) else 0


def coverage(queries: Sequence[str], sources: Sequence[Source], frequency: Callable[[Sequence[str]], dict[str, int]],
             total: int, names_from: Sequence[str] | None = None,
             similarity: Callable[[], float] = lambda: 0.0, comparison: bool = False) -> Coverage:
    """Can these sources answer what `queries` (English search text) ask?

    Declined when a coined name of the question appears in no indexed paper, or when the best source
    holds under half of the question's rare terms (by idf weight) *and* the closest paper's cosine
    similarity, `similarity()` (asked only then), is under RELEVANCE_FLOOR: two weak signals agreeing.
    `frequency` gives each term's chunk count in the whole index, `total` the index size; coined names
    come from `names_from` (default: `queries`), so a name the rewriting model made up counts not.
    For a `comparison` ("compare A and B"), the sources together may hold the rare terms: each paper
    holds its own name."""
    if not sources:
        return Coverage(False)
    names = [n for q in (queries if names_from is None else names_from) for n in coined_names(q)]
    counts = frequency([n.lower() for n in names]) if names else {}
    unknown = tuple(dict.fromkeys(n for n in names if counts.get(n.lower(), 0) == 0))
    if unknown:
        return Coverage(False, unknown_names=unknown)
    # key terms only from English text: the index is English, so a Chinese word is never "rare" evidence
    english = [q for q in queries if not re.search(r"[\u3000-\u9fff]", q)]
    terms = list(dict.fromkeys(t for q in english for t in query_terms(q) if not t.isdigit() and t not in QUESTION_WORDS))
    df = frequency(terms) if terms else {}
    rare = [t for t in terms if df.get(t, 0) <= RARE_DF]
    if not rare:
        return Coverage(True)
    weight = {t: math.log((total + 1) / (df.get(t, 0) + 0.5)) for t in rare}
    best, union = 0.0, set()
    for s in sources:
        words = word_set(f"{s.paper.title} {s.paper.abstract}")
        held = {t for t in weight if t in words or stem(t) in words}
        union |= held
        best = max(best, sum(weight[t] for t in held) / sum(weight.values()))
    if comparison:
        best = max(best, sum(weight[t] for t in union) / sum(weight.values()))
    if best >= MIN_RARE_COVERAGE:
        return Coverage(True, rare_terms=tuple(rare), best_coverage=round(best, 3))
    close = similarity()
    if close >= RELEVANCE_FLOOR:
        return Coverage(True, rare_terms=tuple(rare), best_coverage=round(best, 3), similarity=round(close, 4))
    return Coverage(False, rare_terms=tuple(rare), best_coverage=round(best, 3), similarity=round(close, 4))


# --- sentence support (after the model) ---------------------------------------------------------

_CITE = re.compile(r"\[(\d{1,3})\]")
_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*%?")
MIN_SUPPORT = 0.5  # share of a sentence's content words that its cited abstracts must hold
MIN_SHARE_PER_SOURCE = 0.25  # a sentence citing several sources: each must hold this share of its words
ATTRIBUTE_SUPPORT = 0.8  # an uncited sentence this well supported by one source gets that source's [n]
# Words of sentences that point at sources rather than claim anything ("This is described in [1].").
META_WORDS = frozenset("""retrieved provide provides provided detailed detail details information described
describes discussed discusses mentioned source sources approach topic question covered cover covers found see
refer refers presented presents introduced introduces proposed relevant related following""".split())


@dataclass(frozen=True)
class SentenceCheck:
    text: str
    cited: tuple[int, ...]
    supported: bool | None  # None: not checked (cites nothing, claims nothing, or too few English words)
    support: float  # share of content words found in the cited abstracts
    missing_numbers: tuple[str, ...] = ()
    attributed: bool = False  # its citation was added by code (rag.answer.verify.attribute_uncited), not the model

    def to_json(self) -> dict:
        return asdict(self)


def split_sentences(text: str) -> list[str]:
    """Sentences with their [n] markers; Chinese full stops end sentences too.

    Markers go with the sentence they close ("... context [1]. Next ..."), unless the answer puts them
    first ("[1] Title: ...。[2] Title: ..."), as the small model often does in Chinese: then with the next."""
    if "\n" in text.strip():  # lines (list items, paragraphs) end sentences too
        return [s for line in text.splitlines() for s in split_sentences(line)]
    leading = bool(re.match(r"\s*\[\d{1,3}\]", text))
    end = r"[.!?。！？](?=\s|$|\[|[\u3000-\u9fff])" if leading else r"[.!?。！？](?:\s*,?\s*\[\d{1,3}\])*(?=\s|$|[\u3000-\u9fff])"
    parts, start = [], 0
    for m in re.finditer(end, text):
        if m.group(0)[0] == "." and re.search(r"(?:\d|\be\.g|\bi\.e|\bet al|\bvs)$", text[start:m.start()]):
            continue  # 3.5, e.g., et al.: not an end
        parts.append(text[start:m.end()].strip())
        start = m.end()
    if text[start:].strip():
        parts.append(text[start:].strip())
    return [p for p in parts if p]


def _numbers(text: str) -> list[str]:
    return [n.rstrip("%").replace(",", "") for n in _NUMBER.findall(text)]


def _evidence(source: Source) -> str:
    if source.review_id:  # a review supports only what the review says
        return f"{source.paper.title}. {source.text}"
    return f"{source.paper.title}. {source.paper.abstract} {source.text}"


def _claim_words(sentence: str) -> list[str]:
    """The sentence's content words that can be looked up in English abstracts (no markers, no CJK)."""
    return [w for w in content_words(_CITE.sub("", sentence)) if not re.search(r"[\u3000-\u9fff]", w)]


def _weak_sources(words: Sequence[str], cited: Sequence[int], by_n: dict[int, Source]) -> set[int]:
    """The cited sources holding under MIN_SHARE_PER_SOURCE of `words`: a wrong extra citation."""
    return {n for n in cited if share_held(words, word_set(_evidence(by_n[n]))) < MIN_SHARE_PER_SOURCE}


def check_sentence(sentence: str, by_n: dict[int, Source]) -> SentenceCheck:
    """Does what the sentence cites hold its words and numbers? Unsupported when under MIN_SUPPORT of its
    content words are in the cited abstracts together, when one of several cited abstracts holds almost none
    of them (a wrong extra citation), or when a number of the sentence is in none of them."""
    cited = tuple(dict.fromkeys(int(n) for n in _CITE.findall(sentence) if int(n) in by_n))
    body = _CITE.sub("", sentence)
    if not cited:
        return SentenceCheck(sentence, (), None, 0.0)
    evidence = " ".join(_evidence(by_n[n]) for n in cited)
    latin = _claim_words(sentence)
    support = share_held(latin, word_set(evidence))
    numbers = set(_numbers(evidence))
    missing = tuple(n for n in dict.fromkeys(_numbers(body)) if n not in numbers and n not in {str(c) for c in cited})
    if missing:
        return SentenceCheck(sentence, cited, False, round(support, 3), missing)
    if len([w for w in latin if w not in META_WORDS]) < 2 and not re.search(r"[\u4e00-\u9fff]", body):
        return SentenceCheck(sentence, cited, None, round(support, 3))  # points at a source, claims nothing
    if len(latin) < 3 and re.search(r"[\u4e00-\u9fff]", body):
        # a Chinese sentence is checked on its numbers and on the English words it keeps (titles, terms);
        # with fewer than 3 of those there is no lexical evidence either way
        return SentenceCheck(sentence, cited, None, round(support, 3))
    if len(cited) > 1 and _weak_sources(latin, cited, by_n):
        return SentenceCheck(sentence, cited, False, round(support, 3))
    return SentenceCheck(sentence, cited, support >= MIN_SUPPORT, round(support, 3))


def check_sentences(text: str, sources: Sequence[Source], attributed: Sequence[str] = ()) -> list[SentenceCheck]:
    by_n = {s.n: s for s in sources}
    checks = [check_sentence(s, by_n) for s in split_sentences(text)]
    return [SentenceCheck(**{**asdict(c), "attributed": True}) if c.text in attributed else c for c in checks]


def attribute_uncited(text: str, sources: Sequence[Source]) -> tuple[str, list[str], list[int]]:
    """Give an uncited sentence the [n] of the one source that holds nearly all its words (and numbers).

    Small models often restate an abstract without citing it; this keeps "every claim cited" true without
    trusting the model. Returns (text, the sentences as now cited, source numbers added in order)."""
    done, added = [], []
    for sentence in split_sentences(text):
        if _CITE.search(sentence) or len(content_words(_CITE.sub("", sentence))) < 4:
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
            numbers = [n for n in map(int, _CITE.findall(m.group(2))) if n not in weak]
            if not numbers:
                return ""
            return m.group(1) + (", " if "," in m.group(2) else "").join(f"[{n}]" for n in numbers)

        pruned = _MARKER_RUN.sub(keep, sentence)
        pruned = re.sub(r"\s+([.!?。！？])", r"\1", pruned)  # "context ." after a run went away
        if check_sentence(pruned, by_n).supported:
            text = text.replace(sentence, pruned, 1)
            removed += [n for n in check.cited if n in weak and n not in removed]
    return text, removed


def echoes(text: str, secret_texts: Sequence[str], run: int = 8) -> bool:
    """True when `text` repeats `run` consecutive words of any of `secret_texts` (e.g. the prompt)."""
    words = _WORD.findall(text.lower())
    said = {tuple(words[i:i + run]) for i in range(len(words) - run + 1)}
    for secret in secret_texts:
        w = _WORD.findall(secret.lower())
        if any(tuple(w[i:i + run]) in said for i in range(len(w) - run + 1)):
            return True
    return False
