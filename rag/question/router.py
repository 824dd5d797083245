"""The router: one decision per question, made once, read by every later stage.

`route` turns a cleaned question (and the conversation so far) into an `Intent`: what kind of question it is
(a lookup, a comparison, a question about the reviews, a count/average/ranking), its language, whether it
leans on earlier turns, the names it uses, the constraints it states ("oral papers", "in the X area"), and
English text to search and parse with. Chinese questions reach every kind: their cue words are read here
in Chinese, and their terms are put into English by the glossary at once (the model's translation refines
the search later, rag.question.rewrite). No later stage looks at the raw text to guess any of this again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from rag.question.aggregate import Aggregate, parse_aggregate, parse_aggregate_zh
from rag.question.glossary import gloss
from rag.question.turns import ORDINAL
from rag.retrieve.filters import STATUS_GROUPS, Filters
from rag.text import coined_names, content_words, han_characters, has_cjk, language, latin_words

# A question in another language holding this many English words is searched as written, unless it is mostly Chinese:
# more than HAN_PER_ENGLISH_WORD Chinese characters per English word ("提出一种结合LLM和PRM的理论框架用于TTS的论文..."
# has 3 English words and 57 characters that say what the paper does).
MIN_OWN_ENGLISH_WORDS = 3
HAN_PER_ENGLISH_WORD = 2


class Kind(str, Enum):
    LOOKUP = "lookup"  # find and summarise the papers that answer it (the default)
    COMPARE = "compare"  # 2-4 papers side by side: a table from their abstracts, then a contrast
    REVIEW = "review"  # what the official reviews of a paper say
    AGGREGATE = "aggregate"  # a count, an average or a ranking, computed in code


@dataclass(frozen=True)
class Intent:
    """What a question asks, decided once (see the module docstring)."""

    question: str  # as cleaned (rag.question.clean), in the user's words
    kind: Kind = Kind.LOOKUP
    lang: str = "en"  # rag.text.language: "en" (any Latin-script text is searched as written), "zh", ...
    followup: bool = False  # refers back to earlier turns ("its", "the second one", "它")
    has_history: bool = False  # there are earlier turns (a rewrite may be needed even without "it")
    names: tuple[str, ...] = ()  # coined names as written ("DroPE", "LookaheadKV")
    filters: Filters = field(default_factory=Filters)  # constraints the question states
    english: str = ""  # English text for the question: itself, or its glossary translation (see `gloss`)
    aggregate: Aggregate | None = None  # kind AGGREGATE: what to compute
    review_fields: tuple[str, ...] = ()  # kind REVIEW: which parts of a review answer it
    compare_count: int = 2  # kind COMPARE: how many papers (2-4)
    papers: tuple[str, ...] = ()  # kind COMPARE of the pinned papers: exactly these ids
    described: tuple[str, ...] = ()  # kind COMPARE: the papers it describes instead of naming (`descriptions`)

    @property
    def chinese(self) -> bool:
        return self.lang == "zh"

    @property
    def foreign(self) -> bool:
        """Written in another language, with too few English words of its own to be searched as it is
        ("有没有关于KV缓存压缩的论文？", "如何从RGB图像和稀疏点云中推断出ego-centric的深度图？"; not "DroPE 是什么? why does
        it extend context?")."""
        english = len(latin_words(self.question))
        return self.lang != "en" and (english < MIN_OWN_ENGLISH_WORDS
                                      or han_characters(self.question) > HAN_PER_ENGLISH_WORD * english)

    @property
    def rewrite(self) -> str:
        """Why the model should write a standalone English query: "followup", "translate", or "" (no need)."""
        if self.has_history:
            return "followup"
        return "translate" if self.foreign else ""

    def refined(self, english: str) -> "Intent":
        """The same intent with a better English text (the model's translation)."""
        return replace(self, english=english)


# -- kinds --------------------------------------------------------------------------------------------
_ONE_THE_OTHER = r"\bone\b[^.?!]{3,300}\bthe other\b"  # "one paper prunes experts while the other merges them"
_COMPARE = re.compile(r"\b(?:compare[sd]?|comparison|comparing|differ(?:s|ence|ences)?|versus|vs\.?|contrast)\b"
                      r"|比较|对比(?!式|学习)|区别|异同|差异|有(?:什么|何|哪些)不同|不同之处|相比"
                      rf"|{_ONE_THE_OTHER}|一(?:篇|种|个)[^。？！]{{2,200}}另一(?:篇|种|个)", re.IGNORECASE)
# One thing set against the usual way ("... compared to traditional attention mechanisms?", "与传统方法相比……"): a question
# about one paper's claim, which its abstract answers, not two papers to set side by side
_USUAL = (r"traditional|existing|conventional|standard|prior|previous|earlier|classical|classic|vanilla|baselines?|"
          r"common|typical|current|naive|plain|popular|mainstream|state-of-the-art|sota")
_AGAINST_USUAL = re.compile(
    r"\b(?:compar(?:e[sd]?|ing|ison)\s+(?:[\w-]+\s+){0,6}?(?:to|with|against)|differ(?:s|ent)?\s+from|versus|vs\.?|"
    r"relative\s+to|in\s+contrast\s+(?:to|with)|than)\s+(?:(?:the|a|an|its|their|most|many)\s+)?"
    rf"(?:(?:{_USUAL})\b|other\s+(?:methods?|approaches|models|techniques|works?|papers|baselines|systems|algorithms)\b)"
    r"|(?:与|和|跟|同|较|比起|相比于|对比)\s*(?:其他|传统|现有|已有|之前|以往|以前|先前|常规|标准|经典|基线|一般|普通|主流)",
    re.IGNORECASE)
# ... unless two papers are described ("the paper that X ... the one that Y", "one X, the other Y")
_TWO_DESCRIBED = re.compile(r"\b(?:paper|one|work|method|approach)\s+that\b.*\b(?:one|paper|work|method|approach)\s+that\b"
                            rf"|{_ONE_THE_OTHER}", re.IGNORECASE)
_COUNT_WORDS = {"two": 2, "both": 2, "three": 3, "four": 4, "两": 2, "二": 2, "三": 3, "四": 4}
# About the reviews themselves (a bare "weaknesses" or "scores" may mean the paper's own limitations or
# benchmark scores; a singular "review" is usually a survey or a moderation step).
_REVIEW = re.compile(r"\breviewers?\b|\breviews\b|\bofficial review|\bratings?\b|\brated\b|审稿|评审|评分",
                     re.IGNORECASE)
# Which part of a review answers the question (first match wins; else summary, strengths and weaknesses).
_REVIEW_FIELDS = ((re.compile(r"weakness|limitation|criticis|concern|缺点|不足", re.I), ("weaknesses",)),
                  (re.compile(r"strength|praise|优点", re.I), ("strengths",)),
                  (re.compile(r"\bquestions?\b|asked|问题", re.I), ("questions",)))
_PINNED = re.compile(r"\bpinned\b|钉选|固定的|置顶", re.IGNORECASE)


def is_comparison(text: str) -> bool:
    """Two or more papers set side by side; not one paper against the usual way ("How does it reduce the cost
    compared to traditional attention?"), unless two papers are named or described."""
    if not _COMPARE.search(text):
        return False
    return not (_AGAINST_USUAL.search(text) and len(coined_names(text)) < 2 and not _TWO_DESCRIBED.search(text))


# Where an English comparison turns from one paper's description to the next ("..., the other ...")
_TURN = re.compile(r"\b(?:differ(?:s)? from|compared? (?:to|with)|versus|vs\.?|(?:and|with) the (?:one|method|approach|"
                   r"paper|model|framework|work)|the other(?: one)?|the second|and how|and what (?:is|are|does))\b",
                   re.IGNORECASE)
# A weaker turn, read only when none of the above is there: inside a description "while" often joins its own two
# halves ("edits object shapes while preserving non-target content")
_TURN_WEAK = re.compile(r"\b(?:while|whereas)\b", re.IGNORECASE)
# A closing question after the last description ("... . How do they differ?"): not part of what the paper does
_CLOSING = re.compile(r"[.;:]\s+(?:how|what|in what|which|where|why)\b[^.;:]*$", re.IGNORECASE)
# The question's opening before the first description ("How does | Compare | In what ways does the paper that ..."):
# not part of what the paper does, and searched with it, "how does" cost DroPE its first place
_OPENING = re.compile(r"^(?:(?:please\s+)?(?:compare|contrast)|(?:how|in what ways?)\s+(?:does|do|did|is|are))\s+",
                      re.IGNORECASE)
# "the difference between X and Y": the first "and a/an/the" after "between" that leaves X 3 content words
_BETWEEN = re.compile(r"\bbetween\b", re.IGNORECASE)
_AND_ARTICLE = re.compile(r"\band (?=(?:a|an|the)\b)", re.IGNORECASE)
# Where a Chinese comparison turns: "提出X的论文与提出Y的论文有什么不同", "X的方法和Y的方法相比有何区别"
_PAPER_ZH = r"的(?:那篇|这篇|一篇|那个|这个)?(?:论文|文章|工作|研究|方法|模型|框架|算法)"
_TURN_ZH = re.compile(_PAPER_ZH + r"\s*(?:与|和|跟|同|以及|相比于|对比|vs\.?|versus)\s*", re.IGNORECASE)
_ASK_ZH = re.compile(rf"(?:{_PAPER_ZH})?\s*(?:相比|比较|对比|比起来|比)?\s*[,，]?\s*(?:在[^，,。？?]{{1,10}}?上)?\s*"
                     r"(?:有(?:什么|何|哪些)|之间(?:有什么|的)?|的)?\s*(?:不同|区别|差异|异同|不一样)")
# "一篇X，另一篇Y" ("one X, the other Y"): where the first description starts (at a clause's start, not "提出一种方法")
# and where the second one does; not "一篇研究", which reads "one studies"
_ONE_ZH = re.compile(r"(?:^|[：:，,。；;])\s*(?:其中)?一(?:篇|种|个|项|类)(?:论文|文章|工作|方法|模型|框架|算法)?\s*(?:则是|则|是)?")
_OTHER_ZH = re.compile(r"\s*[，,；;]\s*(?:而|但)?\s*另(?:一|外一)(?:篇|种|个|项|类)(?:论文|文章|工作|方法|模型|框架|算法)?"
                       r"\s*(?:则是|则|是)?\s*")
_SENTENCE_END_ZH = re.compile(r"[。？?！!；;]|[，,]\s*(?:两者|它们|二者|这两)")
_LEAD_ZH = re.compile(r"^(?:请你?)?(?:比较|对比)(?:一下)?\s*[:：]?\s*")
MIN_DESCRIPTION_WORDS = 3  # content words (English) or Chinese characters and English words (Chinese) per description


def descriptions(text: str) -> tuple[str, ...]:
    """The papers a comparison describes instead of naming ("the paper that X ... differ from the one that Y",
    "the difference between X and Y", "提出X的论文与提出Y的论文有什么不同"): one description per paper, at least two,
    each in the question's own words and language; () when it gives fewer. Retrieval searches each on its own
    (rag.retrieve.search; a Chinese one by its translation, rag.question.rewrite), and the comparison's table takes the
    best paper for each (rag.answer.compare)."""
    if language(text) != "en":
        return _descriptions_zh(text)
    return _split(text, _TURN) or _between(text) or _split(text, _TURN_WEAK)


def _split(text: str, turn: re.Pattern) -> tuple[str, ...]:
    parts = tuple(p.strip(" ,.?") for p in turn.split(text) if len(content_words(p)) >= MIN_DESCRIPTION_WORDS)
    if len(parts) < 2:
        return ()
    closing = _CLOSING.search(parts[-1])
    if closing and len(content_words(parts[-1][:closing.start()])) >= MIN_DESCRIPTION_WORDS:
        parts = (*parts[:-1], parts[-1][:closing.start()])
    return (_OPENING.sub("", parts[0]), *parts[1:])


def _between(text: str) -> tuple[str, ...]:
    between = _BETWEEN.search(text)
    for turn in _AND_ARTICLE.finditer(text, between.end()) if between else ():
        one, other = text[between.end():turn.start()], text[turn.end():]
        if len(content_words(one)) >= MIN_DESCRIPTION_WORDS and len(content_words(other)) >= MIN_DESCRIPTION_WORDS:
            return one.strip(" ,.?"), other.strip(" ,.?")
    return ()


def _descriptions_zh(text: str) -> tuple[str, ...]:
    turn = _TURN_ZH.search(text)
    if turn:
        one, other = _LEAD_ZH.sub("", text[:turn.start()]), text[turn.end():]
    else:  # "（两篇论文都……：）一篇X，另一篇Y。它们有什么区别？"
        turn = _OTHER_ZH.search(text)
        starts = list(_ONE_ZH.finditer(text, 0, turn.start())) if turn else []
        if not starts:
            return ()
        one, other = text[starts[-1].end():turn.start()], text[turn.end():]
        stop = _SENTENCE_END_ZH.search(other)
        other = other[:stop.start()] if stop else other
    end = _ASK_ZH.search(other)
    other = other[:end.start()] if end else re.sub(rf"(?:{_PAPER_ZH})?\s*[。？?！!]*$", "", other)  # "比较X的方法和Y的方法。"
    parts = tuple(p.strip(" ，,。？?；;") for p in (one, other))
    sized = all(han_characters(p) + len(latin_words(p)) >= MIN_DESCRIPTION_WORDS for p in parts)
    return parts if sized else ()


def compare_count(text: str) -> int:
    for word, n in _COUNT_WORDS.items():
        if re.search(rf"\b{word}\b" if word.isascii() else word, text, re.IGNORECASE):
            return n
    return 2


def review_fields(text: str) -> tuple[str, ...]:
    return next((f for pattern, f in _REVIEW_FIELDS if pattern.search(text)), ("summary", "strengths", "weaknesses"))


# -- follow-ups ---------------------------------------------------------------------------------------
_FOLLOWUP = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|above|previous|same|both|compare)\b"
    r"|它|它们|这篇|那篇|这些|那些|上面|前面|两篇",
    re.IGNORECASE,
)


# "the method", "the authors", "该方法", "作者": in a conversation, the paper shown
_DEFINITE = re.compile(r"\bthe (?:method|approach|authors?|framework|technique|algorithm|results?|experiments?)\b"
                       r"|(?:该|这个|这种|此|本)(?:方法|模型|框架|算法|工作|研究|论文)|本文|作者", re.IGNORECASE)
# Words that name a part of any paper, not a topic: a message made only of them ("What datasets were used?", "主要结果是
# 什么？") has no topic of its own, so it asks about the papers shown
_PAPER_PARTS = frozenset(
    "data dataset datasets benchmark benchmarks result results finding findings limitation limitations baseline "
    "baselines author authors experiment experiments evaluation evaluate evaluated evaluates metric metrics code "
    "contribution contributions main key idea ideas novelty novel weakness weaknesses strength strengths future "
    "application applications detail details summary summarize explain used use uses using problem problems solve "
    "solves solved method methods approach approaches performance perform performs compared compare comparison "
    "earlier prior previous work works setting settings assumption assumptions training trained train released "
    "release available open source accepted tell".split())
_PARTS_ZH = re.compile(r"主要|结果|局限性?|不足|缺点|优点|贡献|实验|评测|评估|代码|方法|作者|问题|假设|指标|创新点?|性能|表现|"
                       r"训练|细节|总结|数据集?|基准|基线|论文|文章|工作|什么|哪些|哪个|怎么样?|如何|为什么|[吗呢吧了的是有用在和与做想要能"
                       r"还也都请其中上对比被]|解决|可以|介绍|一下|说说|讲讲|详细|更多|具体|开源|发布|接收|之前|以前|相比|其他")
FOLLOWUP_TOPIC_FREE_WORDS = 12  # a message this short without a topic of its own asks about the papers shown
ANTECEDENT_WORDS = 4  # content words (or two Chinese characters each) before "it" that give it something to point to


# "the paper that drops ...", "the one that evicts ...": "that" opens a description, it points nowhere
_RELATIVE = re.compile(r"\b(?:paper|one|work|method|approach|model|study|article|framework)s?\s+$", re.IGNORECASE)


def is_followup(question: str) -> bool:
    """A question that leans on the conversation: it refers back ("its", "the second one", "[2]", "第三篇": a
    position among the papers shown, as `turns.referred` reads it; "the method", "作者"), is very short, or names no
    topic of its own ("What datasets were used?", "主要结果是什么？")."""
    if ORDINAL.search(question) or any(_points_back(question, m.start()) for pattern in (_FOLLOWUP, _DEFINITE)
                                       for m in pattern.finditer(question)
                                       if not (m.group(0).lower() == "that" and _RELATIVE.search(question[:m.start()]))):
        return True
    if len(question.split()) <= 3 and not re.search(r"[\u4e00-\u9fff]{6,}", question):
        return True
    size = len(latin_words(question)) + han_characters(question) / 2
    return not _topic(question) and size <= FOLLOWUP_TOPIC_FREE_WORDS


def _points_back(question: str, at: int) -> bool:
    """Whether "it"/"the method"/"它" at `at` points back to the conversation, not to what the message itself named
    before it ("What is the proposed method for X, and how does it handle Y?")."""
    before = question[:at]
    return len(content_words(before)) + han_characters(before) / 2 < ANTECEDENT_WORDS


def _topic(question: str) -> bool:
    """Whether the message names something of its own to search for: an English word that is not a part of every
    paper, or Chinese characters left after the glossary's terms and such words are taken out."""
    glossed = gloss(question) if has_cjk(question) else None
    english = f"{question} {glossed.english}" if glossed else question
    if any(w not in _PAPER_PARTS for w in content_words(english) if not has_cjk(w)):
        return True
    return bool(glossed) and han_characters(_PARTS_ZH.sub("", glossed.unknown)) >= 2


# -- constraints stated in the question ---------------------------------------------------------------
_AREA = re.compile(r"""(?:['‘"“]([^'’"”]{3,120})['’"”]|\bin the ([a-z][a-z ,&()/-]{2,100}?))\s*(?:primary\s+)?area""",
                   re.IGNORECASE)


# A paper's fate, not a topic: "rejected papers", "were rejected" (not DPO's "rejected responses", "rejection sampling")
_PAPER_ZH_WORD = r"[^，。？?]{0,30}?(?:论文|投稿|文章|工作)"
_NOT_ACCEPTED_EN = (r"\b(?:desk[- ])?rejected (?:papers?|submissions?|ones|works?)\b|\b(?:were|was|got|been|be) "
                    r"(?:desk[- ])?rejected\b|\bnot (?:been )?accepted\b")
_WITHDRAWN_EN = r"\bwithdrawn (?:papers?|submissions?|ones|works?)\b|\b(?:were|was|got|been|be) withdrawn\b|\bwithdrew\b"
_NOT_ACCEPTED = re.compile(_NOT_ACCEPTED_EN + r"|拒稿|(?:未|没有?)被(?:接收|录用|接受)|被拒(?:稿)?的" + _PAPER_ZH_WORD, re.IGNORECASE)
_WITHDRAWN = re.compile(_WITHDRAWN_EN + r"|撤稿|撤回的" + _PAPER_ZH_WORD + r"|被撤回", re.IGNORECASE)
_FATE_EN = re.compile(rf"{_NOT_ACCEPTED_EN}|{_WITHDRAWN_EN}", re.IGNORECASE)


def without_fate(text: str) -> str:
    """English search text without the words that state a paper's fate ("rejected submissions", "were withdrawn"):
    they are a status filter (stated_filters), and searched as words they found papers about peer review."""
    return " ".join(_FATE_EN.sub(" ", text).split())


def stated_filters(question: str, known_areas: Sequence[str] = ()) -> Filters:
    """Metadata constraints stated in the question: "accepted", "oral", "poster", "rejected", "withdrawn", "in the X
    area" (and their Chinese words). An area counts only if it is one of `known_areas` (case-insensitive): a
    misread area would otherwise filter every paper out."""
    text = question.lower()
    if _WITHDRAWN.search(text):
        statuses = STATUS_GROUPS["Withdrawn"]
    elif _NOT_ACCEPTED.search(text):
        statuses = STATUS_GROUPS["Not accepted"]
    elif re.search(r"\boral\b|\borals\b|口头报告|口头|oral论文", text):
        statuses = STATUS_GROUPS["Oral"]
    elif re.search(r"\bposters?\b|海报", text):
        statuses = STATUS_GROUPS["Poster"]
    elif re.search(r"\baccepted\b|被接收|录用|接收的|被接受", text):
        statuses = STATUS_GROUPS["All accepted"]
    else:
        statuses = ()
    known = {a.lower(): a for a in known_areas}
    named = (next(g for g in m.groups() if g).strip().lower() for m in _AREA.finditer(question))
    areas = tuple(dict.fromkeys(known[a] for a in named if a in known))
    return Filters(statuses=statuses, primary_areas=areas)


# -- the router ---------------------------------------------------------------------------------------
Translate = Callable[[str], str]  # Chinese words -> English (the model, for what the glossary lacks)


def english_of(text: str, translate: Translate | None = None) -> str:
    """English words for a (part of a) question: itself when it is English, else the glossary's terms, and the
    model's translation (`translate`) for whatever Chinese the glossary left."""
    if not has_cjk(text):
        return text
    glossed = gloss(text)
    if translate is not None and len(glossed.unknown) >= 2:
        try:
            return translate(text) or glossed.english
        except Exception:  # a failed model call: the glossary's words are still English
            return glossed.english
    return glossed.english


def route(question: str, history: Sequence[object] = (), pinned: Sequence[str] = (),
          known_areas: Sequence[str] = (), translate: Translate | None = None) -> Intent:
    """The `Intent` of a cleaned question. `history`: earlier turns (only whether there are any is read here);
    `pinned`: the user's pinned paper ids ("compare the pinned papers"); `known_areas`: the primary areas in
    the index; `translate`: a model call for Chinese terms the glossary lacks (asked only by count questions,
    whose topic must be English to be matched against the abstracts)."""
    lang = language(question)
    english = english_of(question) if lang != "en" else without_fate(question)
    base = Intent(question, lang=lang, followup=bool(history) and is_followup(question), has_history=bool(history),
                  names=tuple(coined_names(question)), filters=stated_filters(question, known_areas), english=english)
    counted = (parse_aggregate_zh(question, lambda topic: english_of(topic, translate)) if lang == "zh"
               else parse_aggregate(question))
    if counted is not None:
        return replace(base, kind=Kind.AGGREGATE, aggregate=counted)
    if is_comparison(question):
        if _PINNED.search(question) and 2 <= len(pinned) <= 4:
            return replace(base, kind=Kind.COMPARE, compare_count=len(pinned), papers=tuple(pinned))
        return replace(base, kind=Kind.COMPARE, compare_count=compare_count(question), described=descriptions(question))
    if _REVIEW.search(question):
        return replace(base, kind=Kind.REVIEW, review_fields=review_fields(question))
    return base
