"""After the quotes, before the model writes: does the model find the answer in the sources it is about to read?

The decline score (rag.answer.coverage) weighs words and cosines. It cannot see that a paper on the question's
topic leaves out the specific point asked, and that is most of what it keeps of the generated sets' unanswerable
questions (benchmarks/README.md). The model can read for it. It is asked one yes/no question, placed after the
same sources and question the answer prompt holds, so the model server reuses what it read for the answer that
follows; the first token's probabilities give P(yes). That, the decline score's probability, and how close in
meaning the question is to the best sentence of any source (`closeness`: a second embedder, multilingual-e5, reading
the sentence the quotes would pick; it tells a sentence that says what is asked from one that shares its words) go
into one logistic (`JudgedScore`), fitted on generated sets for an embedder and a chat model
(benchmarks/answer_judge.py); under its threshold the question is declined. A server that gives no probabilities is
read by its one word.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from rag.answer.support import Similarity
from rag.retrieve.passages import Terms, ranked_sentences
from rag.retrieve.search import Source

YES, NO = frozenset({"yes", "是"}), frozenset({"no", "否"})
TOP_LOGPROBS = 10  # the first token's alternatives read for "Yes" and "No"
_EDGE = 1e-4  # probabilities are kept this far from 0 and 1 before their logit


def _logit(p: float) -> float:
    p = min(1 - _EDGE, max(_EDGE, p))
    return math.log(p / (1 - p))


def yes_probability(alternatives: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) from a first token's (token, logprob) alternatives; None when neither is there."""
    yes = sum(math.exp(lp) for token, lp in alternatives if token.strip().lower() in YES)
    no = sum(math.exp(lp) for token, lp in alternatives if token.strip().lower() in NO)
    return yes / (yes + no) if yes + no else None


def ask(llm: BaseChatModel, messages: Sequence[BaseMessage]) -> float | None:
    """The model's P(yes) for the question its `messages` end with (one token written); None when it says neither."""
    reply = llm.bind(max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS).invoke(list(messages))
    content = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
    if content:
        found = yes_probability([(t["token"], t["logprob"]) for t in content[0].get("top_logprobs") or []])
        if found is not None:
            return found
    word = str(reply.content).strip().lower().rstrip(".。")
    return 1.0 if word in YES else 0.0 if word in NO else None


def closeness(question: str, sources: Sequence[Source], terms: Terms, similarity: Similarity) -> float:
    """The cosine of `question` (the English search text) to the closest of the sources' best sentences, each
    source's best by the question's words (rag.retrieve.passages: the sentence its quote would be)."""
    best = [ranked[0][2] for s in sources if (ranked := ranked_sentences(s.paper.abstract, terms))]
    return round(similarity(question, best, question=True), 4) if best else 0.0


@dataclass(frozen=True)
class JudgedScore:
    """The probability of an answer from the decline score's, the model's and the sources' closeness: logistic(bias +
    score x logit(the decline score's probability) + judge x logit(P(yes)) + closeness x the cosine of `closeness`);
    a question under `threshold` is declined. The two
    thresholds are chosen together: a question put to the model is declined before it only under `before` (on the
    decline score alone), lower than the score's own threshold, and the combination decides the rest."""

    bias: float
    score: float
    judge: float
    threshold: float
    before: float
    closeness: float = 0.0

    def probability(self, score_p: float, judge_p: float, close: float = 0.0) -> float:
        z = self.bias + self.score * _logit(score_p) + self.judge * _logit(judge_p) + self.closeness * close
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def declines(self, score_p: float, judge_p: float | None, close: float = 0.0, alone: float | None = None) -> bool:
        """The decision after the yes/no on a question the decline score kept (at `before`): under `threshold`
        weighed with P(yes) and the closeness; without a verdict (`judge_p` None: a failed call, neither word) the
        decline score alone at its own threshold `alone`, and nothing is declined when there is none."""
        if judge_p is None:
            return alone is not None and score_p < alone
        return self.probability(score_p, judge_p, close) < self.threshold

    @classmethod
    def of(cls, fitted: Mapping[str, float], threshold: float | None = None) -> "JudgedScore":
        """From {"bias": .., "score": .., "judge": .., "closeness": .., "threshold": .., "before": ..}
        (rag.settings.MEASURED_JUDGE)."""
        return cls(fitted["bias"], fitted["score"], fitted["judge"],
                   fitted["threshold"] if threshold is None else threshold, fitted["before"], fitted.get("closeness", 0.0))
