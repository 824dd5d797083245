"""Text, one home per idea: words, stems, sentences, coined names, a question's language, OpenReview links.

Every stage reads text through these helpers, so "a word", "a sentence" or "Chinese" means the same thing
in the lexical index, the router, the answer checks and the topic map.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

# -- words --------------------------------------------------------------------------------------------
# Common English words that carry no topic (BM25's idf would shrink them anyway; dropping them keeps FTS5
# from walking posting lists of half the corpus, and keeps them out of every word-overlap check).
STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
once only or other our out over own same she should so some such than that the their them then there
these they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours paper papers work works study studies propose proposes proposed
approach approaches method methods based using use used via new novel there any anything something
existing way ways show shows find look looking kind kinds one ones e g eg etc like
""".split()) | frozenset(
    # the frame of a question typed in a chat ("Has anyone ever tried ...", "Have you seen work on ..."), not its topic:
    # rare in abstracts ("tried" is in 11 of 19,630), so as search terms they would outweigh the topic's own words
    "anyone anybody someone somebody tried try trying ever looked seen heard wonder wondered wondering".split())

# The words more than 0.15% of the whole conference's papers use (scripts/common_words.py writes the list): ordinary
# words of ML abstracts, never a question's rare topic word (rag.answer.coverage).
COMMON_WORDS = Path(__file__).with_name("common_words.txt")


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    return frozenset(COMMON_WORDS.read_text(encoding="utf-8").split()) if COMMON_WORDS.exists() else frozenset()


# A word: a run of letters or digits, where CJK and other scripts part ("用Transformer做" is three words).
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PLAIN = rf"[^\W_{_CJK_CHARS}]+"
_WORD = re.compile(rf"{_PLAIN}|[{_CJK_CHARS}]+")
_HYPHENATED = re.compile(rf"{_PLAIN}(?:-{_PLAIN})*|[{_CJK_CHARS}]+")  # "kv-cache" kept whole
MAX_QUERY_TERMS = 48  # a 100,000-character question still makes a bounded search query


def words(text: str, hyphens: bool = False) -> list[str]:
    """Every lower-cased word of `text`, in order; with `hyphens`, "kv-cache" stays one word."""
    return (_HYPHENATED if hyphens else _WORD).findall(text.lower())


def content_words(text: str) -> list[str]:
    """The distinct words of `text` that are not stop words (nor single letters), in order."""
    return list(dict.fromkeys(w for w in words(text) if len(w) > 1 and w not in STOP_WORDS))


def query_terms(text: str) -> list[str]:
    """The content words of a search query, at most MAX_QUERY_TERMS of them."""
    return content_words(text)[:MAX_QUERY_TERMS]


def joined(text: str) -> dict[str, tuple[str, ...]]:
    """Each hyphenated word of `text` written as one ("meta-cognition" -> "metacognition"), with its parts: the
    same word is written both ways ("fine-tuning" and "finetuning", "multi-modal" and "multimodal")."""
    return {w.replace("-", ""): tuple(w.split("-")) for w in words(text, hyphens=True) if "-" in w}


def search_terms(text: str) -> list[str]:
    """What the lexical index looks for: the query's terms and its hyphenated words written as one (FTS5 splits
    "fine-tuning" at the hyphen, so it would never find "finetuning"), at most 2 x MAX_QUERY_TERMS."""
    return list(dict.fromkeys([*query_terms(text), *list(joined(text))[:MAX_QUERY_TERMS]]))


def stem(word: str) -> str:
    """A light English stem, enough to match "hives" with "hive" and "timetables" with "timetable"."""
    for suffix in ("ies", "es", "s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=1024)
def word_set(text: str) -> frozenset[str]:
    """Content words of `text` (a hyphenated one also written as one, `joined`) and their stems. Cached: every check
    of an answer reads the same abstracts."""
    found = content_words(text) + list(joined(text))
    return frozenset({stem(w) for w in found} | set(found))


def holds(have: frozenset[str], word: str) -> bool:
    """Whether `have`, a `word_set`, holds `word` as written or stemmed."""
    return word in have or stem(word) in have


def share_held(needed: Sequence[str], have: frozenset[str]) -> float:
    """The share of `needed` words found (as written or stemmed) in `have`, a `word_set`."""
    return sum(1 for w in needed if holds(have, w)) / len(needed) if needed else 0.0


def text_held(text: str, have: frozenset[str]) -> float:
    """The share of `text`'s content words found in `have` (a `word_set`), where the parts of a hyphenated word
    count as found when `have` holds them written as one ("meta-cognition" in `text`, "metacognition" in `have`)."""
    parts = {part for one, split in joined(text).items() if holds(have, one) for part in split}
    needed = content_words(text)
    return sum(1 for w in needed if w in parts or holds(have, w)) / len(needed) if needed else 0.0


def latin_words(text: str) -> list[str]:
    """The content words of `text` written in Latin letters or digits (what an English abstract can hold)."""
    return [w for w in content_words(text) if not _NON_LATIN.search(w)]


# -- language -----------------------------------------------------------------------------------------
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_NON_LATIN = re.compile(r"[^\x00-\u024f\u2000-\u206f\u2190-\u22ff]")  # beyond Latin, punctuation, math


def has_cjk(text: str) -> bool:
    """Any Chinese, Japanese or Korean character or full-width punctuation."""
    return bool(_CJK.search(text))


def han_characters(text: str) -> int:
    """How many Chinese (Han) characters `text` has."""
    return len(_HAN.findall(text))


def english_only(text: str) -> str:
    """English text without the few Chinese, Japanese or Korean characters a translation left untranslated
    ("explaining hidden混淆 phenomena" -> "explaining hidden phenomena"), or "" when it is not mostly English (at most
    one such character per two English words)."""
    if language(text) == "en":
        return text
    cjk = len(_CJK.findall(text))
    return " ".join(_CJK.sub(" ", text).split()) if cjk and 2 * cjk <= len(latin_words(text)) else ""


def language(text: str) -> str:
    """The language a question is written in: "zh", "ja", "ko", "en", or "other" (another non-Latin script).

    A few CJK characters decide it ("DroPE是什么？" is Chinese); English names inside do not."""
    if len(_KANA.findall(text)) >= 2:
        return "ja"
    if len(_HANGUL.findall(text)) >= 2:
        return "ko"
    if len(_HAN.findall(text)) >= 2:
        return "zh"
    letters = [c for c in text if c.isalpha()]
    if letters and sum(bool(_NON_LATIN.match(c)) for c in letters) >= max(2, len(letters) // 5):
        return "other"
    return "en"


# -- absence ----------------------------------------------------------------------------------------
# A sentence that says something is absent: "none of the papers ...", "the abstracts do not mention ...",
# "没有论文研究……", "并未涉及". Negation of existence or of coverage, not any "not" ("not only ... but").
_ABSENT_EN = re.compile(
    r"\b(?:no|none|neither|not any)(?:\s+of)?\s+(?:\w+\s+){0,3}?(?:papers?|abstracts?|sources?|studies|study|works?|"
    r"mention|information|evidence|research|results?)\b"
    r"|\b(?:do|does|did)\s*n[o']t\s+(?:\w+\s+)?(?:cover|mention|discuss|address|describe|provide|contain|include|"
    r"report|study|investigate|explore|consider|focus|answer|say|specify|state)\b"
    r"|\bnot\s+(?:\w+ly\s+)?(?:covered|mentioned|discussed|addressed|described|provided|reported|found|available|"
    r"specified|stated)\b"
    r"|\b(?:there (?:is|are) no|cannot (?:be )?(?:answer|determine|find)|unable to (?:answer|find|determine))\b",
    re.IGNORECASE)
# As in English, a negation of existence or coverage, not any 没有 or 无法: "模型无法充分利用高质量数据" ("the model cannot
# make full use of good data") and "该方法没有使用位置编码" are claims; "没有关于滑雪的论文", "无法从摘要中确定" are not.
_ABSENT_ZH = re.compile(
    r"没有[^。！？!?\n，,；;]{0,30}?(?:论文|文章|摘要|研究|工作|资料|来源|信息|提及|提到|涉及|讨论|找到|说明|描述|包含|相关)"
    r"|并未|均未|都未|未(?:提及|提到|涉及|讨论|找到|包含|说明|报告|研究|给出)"
    r"|无法(?:回答|确定|找到|判断|得知|得出|提供|给出|从|根据)|不涉及|不包含|未见|尚无")


def states_absence(text: str) -> bool:
    """Does the text say that the papers (or anything) lack what was asked, in English or Chinese?"""
    return bool(_ABSENT_EN.search(text) or _ABSENT_ZH.search(text))


# -- sentences ----------------------------------------------------------------------------------------
_CITE = re.compile(r"\[(\d{1,3})\]")
_NOT_AN_END = re.compile(r"(?:\d|\be\.g|\bi\.e|\bet al|\bvs|\bcf|\bFig|\bEq)$")


def split_sentences(text: str) -> list[str]:
    """Sentences, in order, with their [n] markers; Chinese full stops and line breaks end sentences too.

    Markers go with the sentence they close ("... context [1]. Next ..."), unless the text puts them first
    ("[1] Title: ...。[2] Title: ..."), as a small model often does in Chinese: then with the next. A run of markers
    written straight before the next sentence's first word, with no space ("……方法。[1]介绍了GLC，……"), is that
    sentence's subject, so it goes with it too."""
    if "\n" in text.strip():  # lines (list items, paragraphs) end sentences too
        return [s for line in text.splitlines() for s in split_sentences(line)]
    leading = bool(re.match(r"\s*\[\d{1,3}\]", text))
    # 。！？ end a sentence whatever follows ("…位置编码。DroPE…"); . ! ? only before a space, a marker, the end or Chinese
    end = (r"[。！？]|[.!?](?=\s|$|\[|[\u3000-\u9fff])" if leading
           else r"(?:[。！？]|[.!?](?=\s|$|\[|[\u3000-\u9fff]))(?:(?:\s*,?\s*\[\d{1,3}\])+(?!\s*,?\s*\[|[\u3400-\u9fffA-Za-z]))?")
    parts, start = [], 0
    for m in re.finditer(end, text):
        if m.group(0)[0] == "." and _NOT_AN_END.search(text[start:m.start()]):
            continue  # 3.5, e.g., et al.: not an end
        parts.append(text[start:m.end()].strip())
        start = m.end()
    if text[start:].strip():
        parts.append(text[start:].strip())
    return [p for p in parts if p]


# A line break inside a sentence of an abstract pasted from a PDF (a quarter of ICLR 2026's have them): one not after
# an end of sentence, a colon or another break
_WRAP = re.compile(r"(?<![.!?:;。！？：；\n])[ \t]*\n(?!\s*\n)[ \t]*")
_WRAPPED_WORD = re.compile(r"([A-Za-z]+)-[ \t]*\n[ \t]*([A-Za-z]+)")  # "secu-\nrity", "real-\nworld"


def unwrapped(text: str) -> str:
    r"""`text` without the line breaks of a PDF's layout: a word broken across lines is joined ("secu-\nrity" ->
    "security") when the joined word is an ordinary word of ML abstracts or of this text, else it keeps its hyphen
    ("real-\nworld" -> "real-world", "Kolmogorov-\nArnold" -> "Kolmogorov-Arnold"); any other break inside a
    sentence becomes a space. Paragraph breaks and breaks after an end of sentence stay."""
    if "\n" not in text:
        return text
    text = re.sub(r"[ \t\r]+\n", "\n", text)
    own: set[str] = set()  # the text's own words, read once, at the first broken word no list knows

    def join(m: re.Match) -> str:
        whole, hyphenated = m.group(1) + m.group(2), f"{m.group(1)}-{m.group(2)}"
        if not m.group(2).islower():
            return hyphenated
        if whole.lower() in common_words() or whole.lower() in STOP_WORDS:
            return whole
        if not own:
            own.update(words(_WRAPPED_WORD.sub(" ", text)))
        return whole if whole.lower() in own else hyphenated

    return _WRAP.sub(" ", _WRAPPED_WORD.sub(join, text))


def abstract_sentences(abstract: str) -> list[str]:
    """An abstract's sentences: `split_sentences` of its `unwrapped` text, so that a line of a PDF's layout is never
    taken for a sentence (it was quoted as "fective multi-turn attacks, often employing known jailbreaking techniques
    such")."""
    return split_sentences(unwrapped(abstract))


def cited_numbers(text: str) -> list[int]:
    """The [n] markers of `text`, in order (repeats kept)."""
    return [int(n) for n in _CITE.findall(text)]


def without_citations(text: str) -> str:
    return _CITE.sub("", text)


_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*%?")


def numbers(text: str) -> list[str]:
    """The numbers written in `text` ("3.5", "12%" -> "12", "1,000" -> "1000")."""
    return [n.rstrip("%").replace(",", "") for n in _NUMBER.findall(text)]


# -- names --------------------------------------------------------------------------------------------
# A coined name: internal capitals (TetraPrune, LookaheadKV, CirrusMoE, DroPE) or letters with digits (Qwen2).
# Bounded by any non-ASCII-alphanumeric, not \b: in "审稿人对DroPE提出" the CJK letters around the name are \w.
_NAME = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z][a-z]+[A-Z][A-Za-z]*|[A-Za-z]+[0-9][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Za-z]*)"
                   r"(?![A-Za-z0-9])")
_VERSION_TAIL = re.compile(r"\.[0-9]")  # "V1.0", "Qwen2.5": a paper's name stops short of its version
_TITLE_NAME = re.compile(r"\s*([^\s:][^:]{1,38}?)\s*:\s")  # "MMSI-Bench: A Benchmark ..." -> "MMSI-Bench"
_INTRODUCES = ("we propose", "we introduce", "we present", "we develop", "we call")


def coined_names(text: str) -> list[str]:
    """Names a text coins or uses ("DroPE", "LookaheadKV", "Qwen2"), in order of appearance."""
    return list(dict.fromkeys(_NAME.findall(text)))


def title_name(title: str) -> str:
    """The name a paper's title gives it before a colon ("DRL-STAF: A Deep ..." -> "DRL-STAF"), or "" when the
    title has none (no colon, or more than three words before it)."""
    m = _TITLE_NAME.match(title)
    return m.group(1) if m and len(m.group(1).split()) <= 3 else ""


def short_name(title: str) -> str:
    """What a paper is called in a sentence: its title's name ("LookaheadKV"), else the whole title."""
    head = title.split(":")[0].strip()
    return head if len(head.split()) <= 4 else title


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


def introduced_names(title: str, abstract: str) -> set[str]:
    """Coined names a paper goes by: in its title, or introduced by a method sentence ("We introduce DroPE"). A
    version's label is not one: "Pusa V1.0" does not go by "V1" (the visual cortex's area in another question)."""
    found = set(_unversioned_names(title))
    for sentence in abstract_sentences(abstract):
        if any(cue in sentence.lower() for cue in _INTRODUCES):
            found |= set(_unversioned_names(sentence))
    return found


def _unversioned_names(text: str) -> list[str]:
    return [m.group() for m in _NAME.finditer(text) if not _VERSION_TAIL.match(text, m.end())]



# -- links --------------------------------------------------------------------------------------------
OPENREVIEW = "https://openreview.net"
_WEB_LINK = re.compile(r"^https?://[^\s<>\"']+$")


def openreview_url(paper_id: str, note_id: str = "") -> str:
    """A paper's page on OpenReview, or one note (a review) on it (ids percent-encoded: they come from files)."""
    url = f"{OPENREVIEW}/forum?id={quote(paper_id, safe='')}"
    return url + (f"&noteId={quote(note_id, safe='')}" if note_id else "")


def web_link(url: str, paper_id: str) -> str:
    """`url` when it is a plain http(s) link, else the paper's OpenReview page: only web links leave the app."""
    return url if url and _WEB_LINK.match(url) else openreview_url(paper_id)
