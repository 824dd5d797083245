"""Pure rendering for the chat: Markdown/HTML strings from answers and papers, escaped for safety.

Nothing from a paper or a model reaches the page unescaped: `<`, `>` and `&` become entities, and
Markdown link syntax in titles is neutralised, so `<script>` or `onerror=` shows as text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.pipeline import Answer, Paper, Source

_MARKER = re.compile(r"\[(\d{1,3})\]")
_MD_SPECIAL = re.compile(r"([\[\]\(\)`*_\\])")
SEARCHING = "_Reading the papers..._"


@dataclass
class Turn:
    """One question and its answer, kept in the user's session."""

    question: str
    answer: Answer
    searched: str = ""  # the model-written search query, when the question was rewritten


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def esc_inline(text: str) -> str:
    """Escape for use inside Markdown link text (titles may contain brackets or underscores)."""
    return _MD_SPECIAL.sub(r"\\\1", esc(text))


def safe_url(paper: Paper) -> str:
    """The paper's page (`Paper.link` lets only http(s) links leave the app)."""
    return paper.link


def source_url(source: Source) -> str:
    """The paper's page, or for a review source that review on OpenReview."""
    return source.link


def cite_href(turn: int, n: int) -> str:
    return f"#cite-{turn}-{n}"


def parse_cite_target(value: str) -> tuple[int, int] | None:
    """'3-2|1700000000' (turn 3, source 2, click time) -> (3, 2)."""
    match = re.match(r"^(\d+)-(\d+)", value or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def linkify(text: str, turn: int, valid: set[int]) -> str:
    """Escaped answer text whose `[n]` markers open source n of this turn in the side panel."""
    def link(m: re.Match) -> str:
        n = int(m.group(1))
        return f"[\\[{n}\\]]({cite_href(turn, n)})" if n in valid else m.group(0)

    return _MARKER.sub(link, esc(text))


def source_line(turn: int, source: Source) -> str:
    p = source.paper
    if source.review_id:  # labeled as a reviewer's opinion, never as the paper's claim
        return (f"[\\[{source.n}\\]]({cite_href(turn, source.n)}) Review {esc(source.review_id)} (a reviewer's opinion) of "
                f"{esc_inline(p.title)} · {esc(source.review_scores or 'no scores')}")
    return f"[\\[{source.n}\\]]({cite_href(turn, source.n)}) {esc_inline(p.title)} · {esc(p.status or 'status unknown')}"


def sources_block(turn: int, sources: Sequence[Source]) -> str:
    lines = "\n".join(f"- {source_line(turn, s)}" for s in sources)
    return f"**Reading {len(sources)} papers:**\n\n{lines}"


def searched_line(searched: str) -> str:
    return f"<sub>Searched for: {esc_inline(searched)}</sub>\n\n" if searched else ""


def streaming_message(turn: int, sources: Sequence[Source], lead: str, text: str, status: str = "",
                      searched: str = "") -> str:
    """The answer while it is written: what code built (`lead`), the model's text so far, a status line (the
    queue, or the estimate of the model's reading time), then the papers."""
    valid = {s.n for s in sources}
    parts = [linkify(p, turn, valid) for p in (lead, text) if p] + ([status] if status else [])
    body = "\n\n".join(parts) or SEARCHING
    return f"{body}\n\n---\n{searched_line(searched)}{sources_block(turn, sources)}"


_FLAG = "\u2063flag\u2063"  # invisible placeholder: survives escaping, then becomes the warning mark
UNSUPPORTED_MARK = ' <sup class="unsupported" title="not found in the cited abstract">⚠ unsupported</sup>'
_UNCITED_FLAG = "\u2063uncited\u2063"
UNCITED_MARK = ' <sup class="unsupported" title="the model cited no paper for this">⚠ uncited</sup>'


def flag_unsupported(answer: Answer) -> tuple[str, int, int]:
    """The answer text with a placeholder after every sentence its cited abstract does not support, and after every
    claim that cites nothing (the model gave no source for it); how many of each."""
    text, start, counts = answer.text, 0, {_FLAG: 0, _UNCITED_FLAG: 0}
    for check in answer.sentences:
        at = text.find(check.text, start)
        if at < 0:
            continue
        end = at + len(check.text)
        flag = _FLAG if check.supported is False else _UNCITED_FLAG if check.uncited else ""
        if flag:
            text, counts[flag] = text[:end] + flag + text[end:], counts[flag] + 1
            end += len(flag)
        start = end
    return text, counts[_FLAG], counts[_UNCITED_FLAG]


def final_message(turn: int, answer: Answer, searched: str = "") -> str:
    valid = {s.n for s in answer.sources}
    text, flagged, uncited = flag_unsupported(answer)
    parts = [linkify(text, turn, valid).replace(_FLAG, UNSUPPORTED_MARK).replace(_UNCITED_FLAG, UNCITED_MARK)]
    if flagged:
        parts.append(f"<sub>⚠ {flagged} sentence{'s' if flagged > 1 else ''} not supported by the abstract "
                     "it cites (its words or numbers are not there): check the paper before relying on it.</sub>")
    if uncited:
        which = f"{uncited} sentences cite no paper" if uncited > 1 else "1 sentence cites no paper"
        parts.append(f"<sub>⚠ {which}: the model gave no source for it, so nothing checked it against the abstracts; "
                     "check it before relying on it.</sub>")
    cited = {c.n for c in answer.citations}
    by_n = {s.n: s for s in answer.sources}
    if answer.unsupported_citations:
        marks = ", ".join(f"[{n}]" for n in answer.unsupported_citations)
        parts.append(f"<sub>Citation check: {marks} taken out of sentences that paper does not support (it holds "
                     "almost none of their words; the other papers cited there do).</sub>")
    if cited:
        refs = "\n".join(f"- {source_line(turn, by_n[c.n])} · [OpenReview]({source_url(by_n[c.n])})"
                         for c in answer.citations)
        parts.append(f"**References**\n\n{refs}")
    elif not answer.counted:  # a count lists its papers itself
        parts.append("_No paper was cited._")
    others = [s for s in answer.sources if s.n not in cited]
    if others:
        parts.append("<sub>Also retrieved: " + " · ".join(source_line(turn, s) for s in others) + "</sub>")
    if searched:
        parts.append(searched_line(searched).strip())
    return "\n\n".join(parts)


def _highlight(abstract: str, passages: Sequence[str]) -> str:
    """The escaped abstract with the passages that were shown to the model marked."""
    spans = []
    for passage in passages:
        passage = passage.rstrip(" .")
        start = abstract.find(passage) if passage else -1
        if start >= 0:
            spans.append((start, start + len(passage)))
    spans.sort()
    out, pos = [], 0
    for start, end in spans:
        if start < pos:
            start = pos
        if start >= end:
            continue
        out += [esc(abstract[pos:start]), "<mark>", esc(abstract[start:end]), "</mark>"]
        pos = end
    out.append(esc(abstract[pos:]))
    return "".join(out)


def paper_panel(source: Source | None) -> str:
    """HTML of the side panel for one paper (or the empty state)."""
    if source is None:
        return "<div class='paper-panel empty'>Click a citation such as [1] to see the paper here.</div>"
    p = source.paper
    keywords = ", ".join(esc(k) for k in p.keywords) or "—"
    tldr = f"<p class='tldr'><b>TL;DR</b> {esc(p.tldr)}</p>" if p.tldr else ""
    return (
        "<div class='paper-panel'>"
        f"<h3>[{source.n}] {esc(p.title)}</h3>"
        f"<p><b>Status</b> {esc(p.status or 'unknown')} · <b>Area</b> {esc(p.primary_area or '—')}</p>"
        f"<p><b>Keywords</b> {keywords}</p>{tldr}"
        f"<p class='abstract'>{_highlight(source.abstract, source.passages)}</p>"
        f"<p><a href='{esc(safe_url(p))}' target='_blank' rel='noopener noreferrer'>Open on OpenReview ↗</a>"
        f" · <code>{esc(p.id)}</code></p>"
        "</div>"
    )


def conversation_markdown(turns: Sequence[Turn]) -> str:
    """The conversation as Markdown, with one reference list of every paper cited in it."""
    lines = ["# PaperChat conversation", ""]
    cited: dict[str, Paper] = {}
    for turn in turns:
        by_n = {s.n: s.paper for s in turn.answer.sources}
        text = turn.answer.text
        for c in turn.answer.citations:  # per-turn [n] -> the paper's stable key
            text = text.replace(f"[{c.n}]", f"[@{c.id}]")
            cited.setdefault(c.id, by_n[c.n])
        lines += [f"**Q:** {turn.question}", "", text, ""]
    if cited:
        lines += ["## References", ""]
        lines += [f"- [@{pid}] {p.title}. ICLR 2026 ({p.status or 'status unknown'}). {safe_url(p)}"
                  for pid, p in cited.items()]
    return "\n".join(lines) + "\n"


def _bib(text: str) -> str:
    return text.replace("\\", "").replace("{", "\\{").replace("}", "\\}")


def bibtex(turns: Sequence[Turn]) -> str:
    """BibTeX entries for the papers cited in the conversation, keyed by OpenReview id."""
    seen: dict[str, Paper] = {}
    for turn in turns:
        by_n = {s.n: s.paper for s in turn.answer.sources}
        for c in turn.answer.citations:
            seen.setdefault(c.id, by_n[c.n])
    entries = []
    for pid, p in seen.items():
        accepted = p.status.startswith(("Oral", "Poster"))
        kind, venue = ("inproceedings", "booktitle = {International Conference on Learning Representations (ICLR)}") \
            if accepted else ("misc", "howpublished = {Submitted to ICLR 2026}")
        entries.append(
            f"@{kind}{{{pid},\n  title = {{{_bib(p.title)}}},\n  {venue},\n  year = {{2026}},\n"
            f"  url = {{{safe_url(p)}}},\n  note = {{{_bib(p.status or 'status unknown')}}}\n}}"
        )
    return "\n\n".join(entries) + ("\n" if entries else "")
