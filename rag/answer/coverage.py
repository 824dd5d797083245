"""Before the model: can the retrieved papers answer at all?

Two kinds of evidence. A name the question uses that no indexed paper mentions ("TetraPrune") is a fact: the
honest answer is a refusal that lists the closest papers, without a model call. Everything else is a weighing of
weak signals (`Signals`: how close the closest paper is in meaning, how much of the question's rare and other
words the best papers hold, whether the lexical and the dense search agree, whether the words are the user's or the
model's) into one probability that the papers answer (`DeclineScore`), fitted per embedder on a generated question set (benchmarks/decline_fit.py), with the
operating point read off its curve (benchmarks/README.md). Every signal is a share or a cosine, so the score means
the same in 19 papers as in 19,630.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields

from rag.retrieve.search import Source
from rag.text import coined_names, common_words, has_cjk, query_terms, stem, word_set

# A term in at most this share of the index's chunks is a topic word worth checking. A share, not a count, so
# it means the same in 19 papers as in 19,630: it is the former absolute 30 chunks of the full conference's
# 19,657 (0.15%); an absolute count made every word of a small corpus "rare".
RARE_SHARE = 30 / 19_657
# The words more than RARE_SHARE of the whole conference's papers use (rag.text.common_words) are never rare, however
# few papers of a small index hold them ("compression" in a 19-paper corpus is absent by chance, not exotic).
AGREEMENT_TOP = 5  # papers of each list (dense, lexical) compared for `Signals.agreement`
# Words of the question itself, not of its topic (they are rare in abstracts, so they would look like topics; or they
# frame what is asked, "the main contribution", "the challenge faced", "its impact on", and the paper that answers
# need not use them).
QUESTION_WORDS = frozenset("""tell apart explain explains mean
main primary key overall specific contribution contributions significance challenge challenges faced impact impacts
relationship relate relates regarding terms introduced introduce introduces address addresses addressed issue issues
affect affects role purpose goal insight insights advantage advantages
oral orals poster posters accepted rejected withdrawn spotlight area areas iclr conference
compare compared comparing comparison contrast differ differs difference differences versus vs pinned""".split())


def paper_names(text: str) -> set[str]:
    """The coined names in `text` that can single out a paper: not those common in ML abstracts at large ("LLMs",
    "LoRA" and "RAG" name a field; a paper whose abstract says "large language models (LLMs)" does not go by it)."""
    return {n for n in coined_names(text) if n.lower() not in common_words()}


def is_rare(term: str, df: int, total: int) -> bool:
    """A topic word worth checking: in at most RARE_SHARE of this index, and not common in ML abstracts at large."""
    return df <= RARE_SHARE * total and term not in common_words() and stem(term) not in common_words()


@dataclass(frozen=True)
class Signals:
    """What the retrieved papers say about whether they answer; each is a cosine or a share (0-1)."""

    closest: float  # the closest chunk's cosine to the question (the embedder's own scale)
    rare_coverage: float  # the best paper's share of the question's rare words, by idf weight (1.0: it has none)
    term_coverage: float  # the best paper's share of all the question's topic words, by idf weight
    agreement: float  # share of the two searches' top papers (dense, lexical) that both rank there, of the shorter
    # list: in a small index the lexical search may match only two papers, and both in the dense top is agreement
    rewritten: float = 0.0  # 1.0 when the text judged is the model's (a translation, a follow-up made standalone):
    # its words are the model's paraphrase, so the same coverage means less than in the user's own words

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def values(self) -> tuple[float, ...]:
        return astuple(self)


@dataclass(frozen=True)
class DeclineScore:
    """The probability that the retrieved papers answer: logistic(bias + sum of weight x signal), fitted per
    embedder; a question under `threshold` is declined."""

    bias: float
    weights: Mapping[str, float]  # by Signals field name
    threshold: float

    def probability(self, signals: Signals) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) * value for name, value in zip(Signals.names(), signals.values()))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    @classmethod
    def of(cls, fitted: Mapping[str, float], threshold: float | None = None) -> "DeclineScore":
        """From a flat mapping {"bias": .., <signal>: .., "threshold": ..} (rag.settings.MEASURED_DECLINE)."""
        return cls(fitted["bias"], {n: fitted[n] for n in Signals.names() if n in fitted},
                   fitted["threshold"] if threshold is None else threshold)


@dataclass(frozen=True)
class Coverage:
    answerable: bool  # when not, unknown_names or rare_terms say why (rag.answer.grounded.refusal_text words it)
    unknown_names: tuple[str, ...] = ()
    rare_terms: tuple[str, ...] = ()
    missing_terms: tuple[str, ...] = ()  # rare terms none of the sources holds (what a refusal names)
    best_coverage: float = 1.0
    signals: Signals | None = None
    probability: float | None = None  # of an answer, by the DeclineScore, when one was applied


Nearest = Callable[[], Sequence[tuple[str, float]]]  # () -> the dense search's top papers (id, cosine), best first
LexicalTop = Callable[[], Sequence[str]]  # () -> the lexical search's top paper ids, best first


def _held_share(weight: Mapping[str, float], sources: Sequence[Source], together: bool) -> float:
    """The best source's share of the terms' weight (or all sources' together)."""
    if not weight:
        return 1.0
    total = sum(weight.values())
    best, union = 0.0, set()
    for s in sources:
        words = word_set(f"{s.paper.title} {s.paper.abstract}")
        held = {t for t in weight if t in words or stem(t) in words}
        union |= held
        best = max(best, sum(weight[t] for t in held) / total)
    return max(best, sum(weight[t] for t in union) / total) if together else best


def coverage(queries: Sequence[str], sources: Sequence[Source], frequency: Callable[[Sequence[str]], dict[str, int]],
             total: int, names_from: Sequence[str] | None = None, nearest: Nearest = lambda: (),
             lexical_top: LexicalTop = lambda: (), comparison: bool = False, rewritten: bool = False,
             score: DeclineScore | None = None) -> Coverage:
    """Can these sources answer what `queries` (English search text) ask?

    Declined when a coined name of the question appears in no indexed paper, or when `score` (fitted for this
    embedder) puts the question under its threshold; without a score (an embedder never fitted) only the names
    decline. `frequency` gives each term's chunk count in the whole index, `total` the index size; coined names
    come from `names_from` (default: `queries`), so a name the rewriting model made up counts not; `rewritten`:
    the queries are the model's text, not the user's. For a `comparison` ("compare A and B"), the sources together
    may hold the words: each paper holds its own name."""
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
    idf = {t: math.log((total + 1) / (df.get(t, 0) + 0.5)) for t in terms}
    rare = [t for t in terms if is_rare(t, df.get(t, 0), total)]
    rare_share = _held_share({t: idf[t] for t in rare}, sources, comparison)
    everywhere = word_set(" ".join(f"{s.paper.title} {s.paper.abstract}" for s in sources))
    missing = tuple(t for t in rare if t not in everywhere and stem(t) not in everywhere)
    dense = list(nearest())
    dense_top = [pid for pid, _ in dense[:AGREEMENT_TOP]]
    lexical = set(list(lexical_top())[:AGREEMENT_TOP])
    compared = min(len(dense_top), len(lexical))
    term_share = _held_share({t: w for t, w in idf.items() if w > 0}, sources, comparison)
    if not english:  # no English text to read (a translation that failed): no word is known to be held
        rare_share = term_share = 0.0
    signals = Signals(closest=round(dense[0][1], 4) if dense else 0.0, rare_coverage=round(rare_share, 3),
                      term_coverage=round(term_share, 3),
                      agreement=round(sum(pid in lexical for pid in dense_top) / compared, 3) if compared else 0.0,
                      rewritten=float(rewritten))
    found = {"rare_terms": tuple(rare), "missing_terms": missing, "best_coverage": signals.rare_coverage,
             "signals": signals}
    if score is None:
        return Coverage(True, **found)
    probability = score.probability(signals)
    return Coverage(probability >= score.threshold, probability=round(probability, 4), **found)
