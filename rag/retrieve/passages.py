"""Which sentences of an abstract answer a query: each sentence scored by the query's words it holds, weighted
by how rare each word is in the index (idf). Used twice: to give the model only the sentences that matter
(a short prompt reads fast on a CPU), and to quote the best sentence of each paper at once, before the
model writes (rag.answer.extract)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rag.text import abstract_sentences, content_words, holds, joined, word_set

# Sentences of fewer words are headings or fragments, not claims worth quoting.
MIN_SENTENCE_WORDS = 6


@dataclass(frozen=True)
class Terms:
    """A query's content words (and their stems) with an idf weight each."""

    weights: Mapping[str, float]
    compounds: tuple[tuple[str, ...], ...] = ()  # the query's hyphenated words, by their content words ("key", "value")

    @classmethod
    def of(cls, texts: Sequence[str], frequency: Callable[[Sequence[str]], dict[str, int]] | None = None,
           total: int = 0) -> "Terms":
        """The words of `texts` (English query text); weighted by idf when `frequency` (chunks per term) and
        `total` (chunks in the index) are given, else all alike."""
        words = list(dict.fromkeys(w for t in texts for w in content_words(t) if not w.isdigit()))
        compounds = tuple(dict.fromkeys(kept for t in texts for parts in joined(t).values()
                                        if len(kept := tuple(p for p in parts if p in words)) > 1))
        if frequency is None or not total or not words:
            return cls({w: 1.0 for w in words}, compounds)
        df = frequency(words)
        return cls({w: math.log((total + 1) / (df.get(w, 0) + 0.5)) for w in words}, compounds)

    def held(self, sentence: str) -> float:
        """The share of the query's idf mass whose words the sentence holds (stems match)."""
        total = sum(self.weights.values())
        if not total:
            return 0.0
        have = word_set(sentence)
        # a part of a hyphenated query word counts only with the rest of it ("value" alone is not "key-value"), and
        # all of them count when the sentence writes the word as one ("keyvalue")
        whole = {p for parts in self.compounds
                 if holds(have, "".join(parts)) or all(holds(have, part) for part in parts) for p in parts}
        partial = {p for parts in self.compounds for p in parts} - whole
        return sum(w for term, w in self.weights.items()
                   if term in whole or term not in partial and holds(have, term)) / total

    def score(self, sentence: str) -> float:
        """`held`, a little less for long sentences (a shorter one saying the same is the better quote)."""
        return self.held(sentence) / (1.0 + 0.02 * len(content_words(sentence)))


def ranked_sentences(text: str, terms: Terms) -> list[tuple[float, int, str]]:
    """(score, position, sentence) of each sentence of `text` long enough to be a claim, best first."""
    found = [(terms.score(s), i, s) for i, s in enumerate(abstract_sentences(text))
             if len(s.split()) >= MIN_SENTENCE_WORDS]
    return sorted(found, key=lambda t: (-t[0], t[1]))


def focus(text: str, terms: Terms, max_tokens: int, count: Callable[[str], int]) -> tuple[str, ...]:
    """The sentences of `text` that best match the query, in their original order, within `max_tokens` (as
    `count` measures them); the first sentence (the problem an abstract sets out) always comes along. Each is
    verbatim in the `unwrapped` abstract, which the paper panel shows, so it can mark exactly what the model read."""
    sentences = abstract_sentences(text)
    if not sentences:
        return (text,)
    chosen = {0}
    budget = max_tokens - count(sentences[0])
    for score, i, sentence in ranked_sentences(text, terms):
        if i in chosen or score <= 0:
            continue
        used = count(sentence)
        if used > budget:
            continue
        chosen.add(i)
        budget -= used
    return tuple(sentences[i] for i in sorted(chosen))
