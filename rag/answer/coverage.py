"""Before the model: can the retrieved papers answer at all?

A name the question uses that no indexed paper mentions ("TetraPrune"), or rare topic words that the best
papers never use (while no paper is close in meaning either), mean the honest answer is a refusal that
lists the closest papers, without a model call. Thresholds: benchmarks/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rag.retrieve.search import Source
from rag.text import coined_names, has_cjk, query_terms, stem, word_set

# A term in at most this share of the index's chunks is a topic word worth checking. A share, not a count, so
# it means the same in 19 papers as in 19,630: it is the former absolute 30 chunks of the full conference's
# 19,657 (0.15%); an absolute count made every word of a small corpus "rare".
RARE_SHARE = 30 / 19_657
# Words more than RARE_SHARE of the whole conference's papers use (scripts/common_words.py): never rare, however
# few papers of a small index hold them ("compression" in a 19-paper corpus is absent by chance, not exotic).
COMMON_WORDS = Path(__file__).with_name("common_words.txt")
MIN_RARE_COVERAGE = 0.5  # the best paper must hold at least this share of the rare words' weight, or be at least
# as close (cosine) to the question as the embedder's relevance floor (settings: EmbeddingSettings.floors)
# Words of the question itself, not of its topic (they are rare in abstracts, so they would look like topics).
QUESTION_WORDS = frozenset("""anyone anybody someone somebody tell apart wonder wondering explain explains mean
oral orals poster posters accepted rejected withdrawn spotlight area areas iclr conference
compare compared comparing comparison contrast differ differs difference differences versus vs pinned""".split())


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    return frozenset(COMMON_WORDS.read_text(encoding="utf-8").split()) if COMMON_WORDS.exists() else frozenset()


def is_rare(term: str, df: int, total: int) -> bool:
    """A topic word worth checking: in at most RARE_SHARE of this index, and not common in ML abstracts at large."""
    return df <= RARE_SHARE * total and term not in common_words() and stem(term) not in common_words()


@dataclass(frozen=True)
class Coverage:
    answerable: bool  # when not, unknown_names or rare_terms say why (rag.answer.grounded.refusal_text words it)
    unknown_names: tuple[str, ...] = ()
    rare_terms: tuple[str, ...] = ()
    best_coverage: float = 1.0
    similarity: float | None = None  # the closest paper's cosine, when it was needed


def coverage(queries: Sequence[str], sources: Sequence[Source], frequency: Callable[[Sequence[str]], dict[str, int]],
             total: int, names_from: Sequence[str] | None = None,
             similarity: Callable[[], float] = lambda: 0.0, comparison: bool = False,
             floor: float | None = None) -> Coverage:
    """Can these sources answer what `queries` (English search text) ask?

    Declined when a coined name of the question appears in no indexed paper, or when the best source
    holds under half of the question's rare terms (by idf weight) *and* the closest paper's cosine
    similarity, `similarity()` (asked only then), is under `floor`: two weak signals agreeing. Without a
    floor (an embedder whose cosines were never measured) missing rare terms alone do not decline.
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
    english = [q for q in queries if not has_cjk(q)]
    terms = list(dict.fromkeys(t for q in english for t in query_terms(q) if not t.isdigit() and t not in QUESTION_WORDS))
    df = frequency(terms) if terms else {}
    rare = [t for t in terms if is_rare(t, df.get(t, 0), total)]
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
    if floor is None:
        return Coverage(True, rare_terms=tuple(rare), best_coverage=round(best, 3))
    close = similarity()
    if close >= floor:
        return Coverage(True, rare_terms=tuple(rare), best_coverage=round(best, 3), similarity=round(close, 4))
    return Coverage(False, rare_terms=tuple(rare), best_coverage=round(best, 3), similarity=round(close, 4))


