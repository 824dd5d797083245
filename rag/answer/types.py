"""What an answer is, whichever stage wrote it: the text, the papers it drew on, its citations and checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.answer.citations import Citation, clean_citations
from rag.answer.compare import Comparison
from rag.answer.extract import Extract
from rag.answer.support import SentenceCheck
from rag.retrieve.search import Source


@dataclass
class Answer:
    question: str
    text: str
    sources: list[Source]
    citations: list[Citation] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    sentences: list[SentenceCheck] = field(default_factory=list)  # each sentence checked against what it cites
    refusal: str = ""  # who declined to answer: "" (nobody), "code" (rag.answer.coverage), "judge" (the model's
    # yes/no on the sources, weighed with the decline score: rag.answer.judge) or "model" (its answer said so)
    comparison: Comparison | None = None  # the table of a comparison answer (its Markdown is the `lead`)
    extract: Extract | None = None  # the abstract sentences quoted before the model wrote (they are the `lead`)
    lead: str = ""  # what opens `text` and was built in code: the quotes, or a comparison's table
    kind: str = "lookup"  # the routed kind (rag.question.router.Kind): lookup, compare, review, aggregate
    unsupported_citations: list[int] = field(default_factory=list)  # [n] taken out of sentences n does not
    # support, next to sources that do (rag.answer.support.drop_extra_citations)

    @classmethod
    def partial(cls, question: str, lead: str, text: str, sources: list[Source], kind: str = "lookup") -> "Answer":
        """What was shown before the user pressed Stop (the lead built in code, the model's text so far), its
        citations cleaned like a finished answer's."""
        whole = f"{lead}\n\n{text}".strip() if lead else text
        clean, cited, dropped = clean_citations(whole, sources)
        return cls(question, clean, sources, cited, dropped, kind=kind, lead=lead if clean.startswith(lead) else "")

    @property
    def prose(self) -> str:
        """The answer without its lead (quotes or table): what the model wrote, or the refusal."""
        return self.text[len(self.lead):].strip() if self.lead and self.text.startswith(self.lead) else self.text

    @property
    def refused(self) -> bool:
        return bool(self.refusal)

    @property
    def counted(self) -> bool:
        """Computed in code over the metadata (a count, an average, a ranking), no citations."""
        return self.kind == "aggregate"

    def to_json(self) -> dict:
        return {
            "answer": self.text,
            "kind": self.kind,
            "citations": [{"n": c.n, "id": c.id, "title": c.title}
                          | ({"kind": "review", "review_id": c.review_id, "url": c.url} if c.review_id else {})
                          for c in self.citations],
            "retrieved": [s.paper.id for s in self.sources],
            "dropped_citations": self.dropped,
            "refused": self.refused,
            "sentences": [c.to_json() for c in self.sentences],
            "comparison": self.comparison.to_json() if self.comparison else None,
            "quoted": [{"n": q.n, "sentence": q.sentence} for q in self.extract.quotes] if self.extract else [],
            "counted": self.counted,
            "removed_citations": self.unsupported_citations,
        }
