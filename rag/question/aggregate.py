"""What an aggregate question asks: a count, an average or a ranking over the papers' metadata and their
official reviews' scores (computed in code by rag.answer.counts, never guessed by a model).

Three shapes of question:
- a count: "how many oral papers on KV cache?", "how many papers have an average rating above 6?";
- an average: "what is the average rating of oral papers on KV cache?", "mean soundness score of posters";
- a ranking: "which KV-cache papers had the highest ratings?", "top 5 lowest-rated papers on unlearning".

Definitions (each answer states the one it used):
- the topic is a phrase, matched case-insensitively as whole words in the title, abstract or keywords,
  with hyphens, spaces or nothing between its words alike ("KV-cache" = "KV cache" = "KVcache") and an
  optional plural ending ("KV caches"); "DroPE" does not match "DropEdge";
- status and area come from the filters: the UI's, the question's own ("oral", "in the X area") and the
  noun ("orals", "posters");
- a score is one of the reviews' fields (rating unless soundness, presentation, contribution or reviewers'
  confidence is named). A paper's score is the mean over its reviews; an average is over all reviews of
  the matching papers (each review counts once), with the mean of the papers' own averages next to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


_COUNT = re.compile(
    r"^\s*(?:how many|number of|count (?:of )?(?:the )?)\s*(?:(?:oral|poster|accepted|rejected|withdrawn|iclr|2026)\s+)*"
    r"(papers|orals|posters|submissions|works)\b(?P<rest>.*)$", re.IGNORECASE)
_TOPIC = re.compile(r"\b(?:on|about|mentioning|mention|mentions|related to|regarding|using|use|uses|studying|study|"
                    r"studies|propose|proposing|with the keyword|with keyword)\s+(?P<topic>.+)$", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:in the\b.*|at iclr.*|were\b.*|are there.*|are\b.*|have\b.*|has\b.*|had\b.*|got\b.*|"
                   r"did\b.*|received?\b.*|with (?:an?|the|their|its)\b.*|in iclr.*)$", re.IGNORECASE)
DEFAULT_TOP = 10  # papers a ranking lists unless the question says "top 5"
BY_TYPE = {"orals": ("Oral", "Oral (conditional)"), "posters": ("Poster", "Poster (conditional)")}

# -- review scores in a question ---------------------------------------------------------------------------
SCORE_FIELDS = ("rating", "soundness", "presentation", "contribution", "confidence")
# A word that names reviewers' scores. A bare "scores" may be a benchmark's ("highest scores on GSM8K"), and a
# bare "confidence" a model's, so those count only next to "review(er)".
_SCORE = re.compile(r"\brat(?:ed|ings?)\b|\breview(?:er)?s?'?\s+scores?\b|\bscores?\s+(?:from|by|given by)\s+(?:the\s+)?"
                    r"reviewers?\b|\breviewed\b|\breviews\b|\bsoundness\b|\bpresentation\s+scores?\b|"
                    r"\bcontribution\s+scores?\b|\breviewers?'?\s+confidence\b|\bconfidence\s+(?:scores?\s+)?"
                    r"(?:from|of|given by)\s+(?:the\s+)?reviewers?\b", re.IGNORECASE)
_FIELD = re.compile(r"\b(soundness|presentation|contribution|confidence)\b", re.IGNORECASE)
_AVERAGE = re.compile(r"\b(?:average|mean|avg)\b", re.IGNORECASE)
_HIGH = re.compile(r"\b(?:highest|best|top|strongest|most highly)\b", re.IGNORECASE)
_STRICT_HIGH = re.compile(r"\b(?:highest|best|strongest|most highly)\b", re.IGNORECASE)
_LOW = re.compile(r"\b(?:lowest|worst|weakest|poorest|least)\b", re.IGNORECASE)
_TOP_N = re.compile(r"\btop[- ]?(\d{1,2})\b|\b(\d{1,2})\s+(?:highest|best|lowest|worst|top|most)", re.IGNORECASE)
# The clause that asks for the score ("had the highest ratings", "the average rating", "top-rated",
# "received the best reviews from reviewers"): cut out to leave the topic.
_SCORE_PHRASE = re.compile(
    r"(?:\b(?:had|have|has|got|get|gets|received|receive|receives|with|by|in terms of|according to|that|which|"
    r"were|was|are|is)\s+)*(?:\b(?:the|their|its|an?)\s+)?(?:\btop[- ]?\d*\s*|\b\d{1,2}\s+)?"
    r"(?:\b(?:highest|best|top|strongest|most highly|lowest|worst|weakest|poorest|least|average|mean|avg)[- ]?\s*)*"
    r"(?:\b(?:official|reviewers?'?|review)\s+)?"
    r"\b(?:rated|ratings?|scored|scores?|reviews|reviewed|soundness|presentation|contribution|confidence)\b"
    r"(?:\s+(?:scores?|ratings?)\b)?(?:\s+(?:from|by|given by|among|across)\s+(?:the\s+)?reviewers?\b)?"
    r"(?:\s+on average\b)?", re.IGNORECASE)
_THRESHOLD = re.compile(
    r"(?P<op>at least|no less than|greater than or equal to|above|over|greater than|more than|higher than|>=|≥|>|"
    r"at most|no more than|below|under|less than|lower than|<=|≤|<|of exactly|exactly|equal to|of|=)\s*"
    r"(?P<n>\d+(?:\.\d+)?)(?P<or>\s+or\s+(?:more|higher|above|better|less|lower|below|worse))?", re.IGNORECASE)
_OPS = {"at least": ">=", "no less than": ">=", "greater than or equal to": ">=", ">=": ">=", "≥": ">=",
        "above": ">", "over": ">", "greater than": ">", "more than": ">", "higher than": ">", ">": ">",
        "at most": "<=", "no more than": "<=", "<=": "<=", "≤": "<=",
        "below": "<", "under": "<", "less than": "<", "lower than": "<", "<": "<",
        "of exactly": "==", "exactly": "==", "equal to": "==", "of": "==", "=": "=="}
_REVIEWED = re.compile(r"\b(?:were|was|got|get|received|receive|have|has|had|with)\s+(?:any\s+|an?\s+|some\s+)?"
                       r"(?:official\s+)?(?:reviews|ratings?|rated|reviewed)\b", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:(?:which|what|list|show|name|give me|find|tell me)\b\s*)?(?:(?:are|were|is|was|the|me|of|"
                   r"for|among|across|on|about|in|all)\b\s*)*", re.IGNORECASE)
_NOUN = re.compile(r"\b(papers?|orals?|posters?|submissions?|works?)\b", re.IGNORECASE)
_NOT_TOPIC = re.compile(r"\b(?:oral|poster|accepted|rejected|withdrawn|spotlight|iclr|2026|the|all|of|at|in|"
                        r"conference|reviewers?)\b", re.IGNORECASE)
_AREA_PHRASE = re.compile(r"\bin the [a-z][a-z ,&()/-]{2,100}?\s*(?:primary\s+)?area\b", re.IGNORECASE)


@dataclass(frozen=True)
class Aggregate:
    """An aggregate question. `kind`: "count", "average", "highest" or "lowest"; `topic`: the phrase ("" = every
    paper); `statuses`: those the noun names ("orals"); `field`: the review score it is about; `threshold`:
    a count's (op, value) on the papers' average score; `reviewed`: a count of reviewed papers only."""

    topic: str
    statuses: tuple[str, ...] = ()
    kind: str = "count"
    field: str = "rating"
    threshold: tuple[str, float] | None = None
    reviewed: bool = False
    top: int = DEFAULT_TOP

    @property
    def needs_reviews(self) -> bool:
        return self.kind != "count" or self.threshold is not None or self.reviewed


def _field(question: str) -> str:
    found = _FIELD.search(question)
    return found.group(1).lower() if found else "rating"


def _clean_topic(text: str) -> str:
    text = re.sub(r"(?:'s|’s)\b", "", text)  # "DroPE's average rating"
    return re.sub(r"\s+", " ", text).strip(" \"'“”‘’,;:-")


def parse_aggregate(question: str) -> Aggregate | None:
    """The aggregate a question asks for, or None when it asks for something else."""
    q = question.strip().rstrip("?？.!！ ")
    found = _COUNT.match(q)
    if found:
        return _parse_count(found)
    if _SCORE.search(q) and (_AVERAGE.search(q) or _HIGH.search(q) or _LOW.search(q)):
        return _parse_score(q)
    return None


def _parse_count(found: re.Match[str]) -> Aggregate:
    rest = found.group("rest").strip()
    threshold, reviewed = None, False
    if _SCORE.search(rest):
        limit = _THRESHOLD.search(rest)
        if limit:
            op = _OPS[limit.group("op").lower()]
            if limit.group("or"):
                op = ">=" if re.search(r"more|higher|above|better", limit.group("or"), re.I) else "<="
            threshold = (op, float(limit.group("n")))
            rest = rest[:limit.start()] + rest[limit.end():]
        reviewed = threshold is None and bool(_REVIEWED.search(rest))
        if threshold or reviewed:
            rest = _SCORE_PHRASE.sub(" ", rest)
    topic = ""
    m = _TOPIC.search(rest)
    if m:
        topic = _clean_topic(_TAIL.sub("", m.group("topic").strip()))
    return Aggregate(topic, BY_TYPE.get(found.group(1).lower(), ()), field=_field(found.group(0)),
                     threshold=threshold, reviewed=reviewed)


def _parse_score(q: str) -> Aggregate:
    field = _field(q)
    if _AVERAGE.search(q) and not (_HIGH.search(q) or _LOW.search(q)):
        kind = "average"
    else:  # "highest average rating" ranks papers by their average; "top 3 lowest-rated" is a lowest
        kind = "lowest" if _LOW.search(q) and not _STRICT_HIGH.search(q) else "highest"
    n = _TOP_N.search(q)
    top = int(n.group(1) or n.group(2)) if n else DEFAULT_TOP
    rest = _AREA_PHRASE.sub(" ", q)
    rest = re.sub(r"\b(?:at|in|of|from)\s+ICLR(?:\s*2026)?\b|\bICLR(?:\s*2026)?\b", " ", rest, flags=re.IGNORECASE)
    rest = _SCORE_PHRASE.sub(" ", rest)
    rest = _LEAD.sub("", rest)
    statuses: tuple[str, ...] = ()
    noun = _NOUN.search(rest)
    if noun:
        word = noun.group(1).lower()
        statuses = BY_TYPE.get(word if word.endswith("s") else word + "s", ())
        before, after = rest[:noun.start()], rest[noun.end():]
        m = _TOPIC.search(after)
        after = _TAIL.sub("", m.group("topic")) if m else ""
        modifier = _NOT_TOPIC.sub(" ", before)
        topic = _clean_topic(after) or _clean_topic(modifier)
    else:
        topic = _clean_topic(_TAIL.sub("", _NOT_TOPIC.sub(" ", rest)))
    if re.fullmatch(r"(?:of|for|by|on|about|papers?|\d+)?", topic, re.IGNORECASE):
        topic = ""
    return Aggregate(topic, statuses, kind=kind, field=field, top=top)




# -- the same questions in Chinese -------------------------------------------------------------------------
# "有多少篇关于KV缓存的口头报告论文？", "口头报告论文的平均评分是多少？", "评分最高的5篇扩散模型论文": the shape is read
# here; status and area are stated filters (rag.question.router); the topic is given to `english` to translate.
# A count of papers: "多少篇", "有多少…论文", "论文的数量". Not "十几个任务" (几 after a numeral is "a dozen or so", not a
# question), not "DroPE有多少层？" (how many of something else: a lookup, as "How many layers does DroPE use?" is), and
# not "该论文提出的框架如何确定每个输入的最优假设数量？" (a number the paper is about: the count word must ask for papers).
_HOW_MANY_ZH = r"(?:有多少|(?<![十百千万两一二三四五六七八九\d])(?:多少|几)\s*(?:个|项|份))"
_PAPER_WORD_ZH = r"(?:论文|文章|工作|投稿|papers?|submissions?)"
_ZH_COUNT = re.compile(rf"(?<![十百千万两一二三四五六七八九\d])(?:多少|几)\s*篇"
                       rf"|{_HOW_MANY_ZH}[^。？?！!，,]{{0,24}}?{_PAPER_WORD_ZH}"
                       rf"|(?<![该这此本])(?<!该篇)(?<!这篇)(?<!此篇)(?<!本篇){_PAPER_WORD_ZH}\s*(?:的|一共|总共|共)?\s*(?:有多少|数量|总数|数目)", re.IGNORECASE)
_ZH_SCORE = re.compile(r"评分|分数|打分|得分|评审分|审稿分|rating|可靠性|合理性|表达|呈现|贡献|置信度|信心", re.IGNORECASE)
_ZH_AVERAGE = re.compile(r"平均|均分")
_ZH_HIGH = re.compile(r"最高|最好|最强|最佳|排名前|前\s*\d+\s*(?:篇|名)|top", re.IGNORECASE)
_ZH_LOW = re.compile(r"最低|最差|最弱")
_ZH_TOP_N = re.compile(r"前\s*(\d{1,2})|top\s*(\d{1,2})|(\d{1,2})\s*篇", re.IGNORECASE)
_ZH_FIELDS = (("soundness", r"可靠性|合理性|严谨性|soundness"), ("presentation", r"表达|呈现|写作质量|presentation"),
              ("contribution", r"贡献|contribution"), ("confidence", r"置信度|信心|confidence"))
_ZH_THRESHOLD = re.compile(r"(?P<op>高于|超过|大于|多于|不低于|至少|不少于|低于|小于|少于|不高于|至多|不超过|等于|为)\s*"
                           r"(?P<n>\d+(?:\.\d+)?)\s*分?|(?P<n2>\d+(?:\.\d+)?)\s*分?\s*(?P<op2>以上|及以上|以下|及以下)")
_ZH_OPS = {"高于": ">", "超过": ">", "大于": ">", "多于": ">", "不低于": ">=", "至少": ">=", "不少于": ">=",
           "低于": "<", "小于": "<", "少于": "<", "不高于": "<=", "至多": "<=", "不超过": "<=", "等于": "==", "为": "==",
           "以上": ">", "及以上": ">=", "以下": "<", "及以下": "<="}
_ZH_TOPIC = (re.compile(r"(?:关于|有关|涉及|针对|研究)\s*(?P<t>[^，。？！?,]+?)\s*(?:的|方面|方向|领域|主题|问题)"),
             re.compile(r"(?P<t>[^，。？！?,的]+?)\s*(?:相关|方面|方向|领域|主题)的"))
# What is left of a question once its cue words go: the topic when no "关于...的" frames it.
_ZH_CUES = re.compile(r"有多少|多少|几|篇|个|项|份|数量|总数|数目|论文|文章|工作|口头报告|口头|海报|被?录用|被?接收|被?接受|"
                      r"平均|均分|评分|分数|打分|得分|最高|最好|最强|最佳|最低|最差|最弱|排名|前\s*\d+|top\s*\d*|名|"
                      r"是|有|哪些|什么|的|中|在|里|ICLR\s*2026|ICLR|2026|请|列出|给出|统计|一共|共|总共|其中|吗|呢|"
                      r"高于|超过|大于|低于|小于|至少|以上|以下|\d+(?:\.\d+)?\s*分?|[，。？！?,.!：:]", re.IGNORECASE)


def parse_aggregate_zh(question: str, english: Callable[[str], str]) -> Aggregate | None:
    """The aggregate a Chinese question asks for, or None. `english` turns its topic into English words (the
    topic is matched against English abstracts)."""
    count = _ZH_COUNT.search(question)
    scored = _ZH_SCORE.search(question)
    average, high, low = (bool(p.search(question)) for p in (_ZH_AVERAGE, _ZH_HIGH, _ZH_LOW))
    threshold = None
    if scored:
        limit = _ZH_THRESHOLD.search(question)
        if limit:
            op = _ZH_OPS[limit.group("op") or limit.group("op2")]
            threshold = (op, float(limit.group("n") or limit.group("n2")))
    if count and not (average and not threshold and re.search(r"平均[^？?]*是多少", question)):
        kind = "count"
    elif scored and (average or high or low):
        kind = "average" if average and not (high or low) else "lowest" if low and not high else "highest"
    else:
        return None
    field = next((name for name, pattern in _ZH_FIELDS if re.search(pattern, question, re.IGNORECASE)), "rating")
    n = _ZH_TOP_N.search(question) if kind in ("highest", "lowest") else None
    top = int(next(g for g in n.groups() if g)) if n else DEFAULT_TOP
    framed = next((m.group("t") for pattern in _ZH_TOPIC for m in [pattern.search(question)] if m), None)
    topic = framed if framed is not None else _ZH_CUES.sub(" ", question)
    topic = " ".join(topic.split())
    topic = _clean_topic(english(topic)) if topic else ""
    return Aggregate(topic, kind=kind, field=field, threshold=threshold if kind == "count" else None,
                     reviewed=False, top=top)
