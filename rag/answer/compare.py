"""Compare: "compare X and Y" gets a table (problem, method, data, main result, limitation) for
2 to 4 papers, every cell cited, before the model's short prose contrast.

The cells are sentences of the cited paper's own abstract, picked by cue words and shortened, so each
one is supported by construction; what an abstract does not say is written as "not stated", never
guessed. Which papers: see `compared_papers` (named ones first, then the best-ranked; for a question that
describes its papers, the retrieval already put each description's best paper first); the rewritten query counts
as naming too, since it resolves "the second one" against earlier turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answer.coverage import paper_names
from rag.retrieve.search import Source
from rag.text import abstract_sentences, common_words, introduced_names, names_paper, split_sentences, title_name

ASPECTS = ("problem", "method", "data", "main result", "limitation")
ASPECTS_ZH = ("问题", "方法", "数据", "主要结果", "局限")
NOT_STATED, NOT_STATED_ZH = "not stated in the abstract", "摘要未提及"
MAX_CELL_WORDS = 28
# Cue words per aspect, strongest first; a sentence is used for one aspect at most.
_CUES: dict[str, tuple[str, ...]] = {
    "method": ("we propose", "we introduce", "we present", "we develop", "we design", "this paper", "this work",
               "our method", "our approach", "our framework", "we formulate", "we leverage", "propose", "introduce"),
    "limitation": ("limitation", "at the cost", "remains challenging", "future work", "does not", "fails to",
                   "is limited", "restricted to", "only applies", "trade-off", "however, our"),
    "main result": ("outperform", "state-of-the-art", "improves", "improvement", "achieves", "surpass", "results show",
                    "experiments show", "demonstrate", "reduces", "speedup", "%", "gains"),
    "data": ("dataset", "benchmark", "experiments on", "evaluated on", "evaluate on", "corpus", "tasks", "trained on"),
    "problem": ("challenge", "problem", "however", "struggle", "remain", "lack", "suffer", "limited", "costly",
                "bottleneck", "difficult", "existing"),
}
_ORDER = ("method", "main result", "data", "limitation", "problem")  # who picks first: the most telling cues


@dataclass(frozen=True)
class Comparison:
    papers: tuple[Source, ...]
    cells: tuple[tuple[str, ...], ...]  # per paper, one cell per aspect (already cited with [n])
    chinese: bool = False

    def markdown(self) -> str:
        aspects = ASPECTS_ZH if self.chinese else ASPECTS
        head = "| " + ("论文" if self.chinese else "paper") + " | " + " | ".join(aspects) + " |"
        rows = [head, "|" + "---|" * (len(aspects) + 1)]
        for source, cells in zip(self.papers, self.cells):
            title = _cell(source.paper.title)
            rows.append(f"| {title} [{source.n}] | " + " | ".join(_cell(c) for c in cells) + " |")
        return "\n".join(rows)

    def to_json(self) -> dict:
        return {"papers": [s.paper.id for s in self.papers],
                "rows": [dict(zip(ASPECTS, cells)) for cells in self.cells]}


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _called(said: str, title: str) -> bool:
    """`said` calls the paper by its whole title, or by its title's name as a whole token; in another case only when
    that name is not an ordinary word ("ATOM: A Pretrained ..." is not called by "all-atom" nor by "each atom")."""
    if title.lower() in said.lower():
        return True
    level = names_paper(said, title)
    return level == 2 or (level == 1 and title_name(title).lower() not in common_words())


def compared_papers(texts: Sequence[str], sources: Sequence[Source], count: int) -> list[Source]:
    """Which papers to compare, `count` in all (2-4): those called by their title or its name (`_called`), then by
    a coined name they introduce ("DroPE"; not "LLMs": `paper_names`), then the best-ranked. A question that
    describes its papers instead ("the approach that X ... the one that Y") was searched description by
    description, and the sources come with each description's best paper first, taking turns
    (rag.retrieve.search: retrieve); that order weighs each paper's dense and lexical rank for its own description
    as well as its words. Picking by the words alone, across all the sources, took a neighbour for a generic
    description more often (benchmarks/README.md)."""
    count = max(2, min(4, count, len(sources)))
    said = " ".join(texts)
    names = paper_names(said)
    by_title = [s for s in sources if _called(said, s.paper.title)]
    by_name = [s for s in sources if s not in by_title and names & introduced_names(s.paper.title, s.paper.abstract)]
    named = by_title + by_name
    rest = [s for s in sorted(sources, key=lambda s: s.n) if s not in named]
    return sorted((named + rest)[:count], key=lambda s: s.n)


def _shorten(sentence: str) -> str:
    words = sentence.split()
    return sentence if len(words) <= MAX_CELL_WORDS else " ".join(words[:MAX_CELL_WORDS]) + " …"


_NOT_A_LIMITATION = re.compile(r"address(?:es|ing)? (?:this|these|the) limitation|limitations?, we|overcome", re.IGNORECASE)


def cells_for(source: Source, chinese: bool = False) -> tuple[str, ...]:
    """One abstract sentence per aspect (cited), or "not stated"."""
    sentences = abstract_sentences(source.paper.abstract) if source.paper.abstract else split_sentences(source.text)
    # "To address this limitation, we propose ..." states the method (and earlier work's limits), not this one's
    taken: set[int] = {i for i, s in enumerate(sentences) if _NOT_A_LIMITATION.search(s) and
                       not any(c in s.lower() for c in _CUES["method"])}
    chosen: dict[str, str] = {}
    for aspect in _ORDER:
        if aspect == "problem" and sentences and 0 not in taken:  # abstracts open with the problem
            chosen[aspect] = sentences[0]
            continue
        for cue in _CUES[aspect]:
            hit = next((i for i, s in enumerate(sentences) if i not in taken and cue in s.lower()), None)
            if hit is not None:
                taken.add(hit)
                chosen[aspect] = sentences[hit]
                break
    missing = NOT_STATED_ZH if chinese else NOT_STATED
    return tuple(f"{_shorten(chosen[a])} [{source.n}]" if a in chosen else missing for a in ASPECTS)


def build_comparison(texts: Sequence[str], sources: Sequence[Source], count: int = 2,
                     chinese: bool = False) -> Comparison | None:
    """The table comparing `count` of the sources (None when fewer than 2 were found). `texts`: the question and
    anything else that may name the papers (the rewritten query)."""
    if len(sources) < 2:
        return None
    papers = compared_papers(texts, sources, count)
    return Comparison(tuple(papers), tuple(cells_for(s, chinese) for s in papers), chinese)
