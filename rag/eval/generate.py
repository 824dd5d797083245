"""A generated evaluation set: labeled questions made by code from a corpus (and the chat model where it helps),
so rules and thresholds are tuned on questions nobody wrote while looking at them.

    paperchat evalset --seed 1 --out benchmarks/evalset/seed1

Kinds (the format of ../shared/eval/README.md, so `paperchat eval` reads it):
* lookup: the model writes a question that a randomly drawn accepted paper's abstract answers, in its own
  words; questions naming the paper (its title's name, a name it introduces, a long piece of its title) are
  rejected by code. Near-duplicate papers (cosine >= ALSO_RELEVANT) count as also relevant.
* unanswerable (leave-out): the same kind of question about other drawn papers, which are then left out of
  the test corpus, together with every paper close to them (cosine >= LEAVE_OUT_NEIGHBOURS): the answer is
  known to be absent.
* unanswerable (near miss): a real topic (a keyword used by several papers) on a platform, domain or data
  set that no title, abstract or keyword in the corpus mentions.
* lookup (broad): a question about a topic several papers share (a keyword of at least BROAD_MIN_PAPERS accepted
  papers in the test corpus), asked as a researcher surveys a field ("Which papers study X?", "What are the main
  challenges in X?"); every paper with that keyword is gold. Not in the default mix: `--kind broad` makes a set of
  them, to measure what the decline rules do to questions that no single abstract was written for.
* compare: two related papers (cosine between COMPARE_MIN and COMPARE_MAX), each described by the model in a
  few words without its name, asked in one of several phrasings drawn at random (prompts.GEN_COMPARE_FRAMES: "How
  does the paper that X differ from the one that Y?", "Two papers: one X, the other Y. How do they differ?", ...).
* followup: a lookup question, then "What are its limitations?"-style turns (half without the word that points
  back: "What are the main limitations?"), one turn naming a related paper.
A share of every kind (CHINESE_SHARE) is translated into Chinese by the model. Written out: questions.jsonl,
the test corpus (the corpus minus the left-out papers) with its index snapshot, and a manifest.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.corpus.papers import Paper
from rag.index.snapshot import Snapshot, read_snapshot, snapshot_path, write_snapshot
from rag.prompts import (GEN_COMPARE_FRAMES, GEN_COMPARE_FRAMES_ZH, GEN_DESCRIBE, GEN_FOLLOWUP_COMPARE_ZH, GEN_QUESTION,
                         GEN_TRANSLATE_PHRASE_ZH, GEN_TRANSLATE_ZH)
from rag.question.glossary import chinese_of
from rag.retrieve.filters import STATUS_GROUPS
from rag.text import (coined_names, content_words, han_characters, has_cjk, introduced_names, language, latin_words,
                      share_held, title_name, word_set, words)

ALSO_RELEVANT = 0.85  # a paper this close to the gold one answers its question too
LEAVE_OUT_NEIGHBOURS = 0.70  # papers this close to a left-out one leave with it
COMPARE_MIN, COMPARE_MAX = 0.55, 0.80  # related enough to compare, different enough to tell apart
CHINESE_SHARE = 0.3
TITLE_RUN = 4  # a question repeating this many consecutive title words names the paper
RARE_NAME_PAPERS = 20  # a capitalised word this few papers use is a paper's own name (of 19,630: 0.1%)
# a capitalised word not opening a sentence ("the Disco method", "(Masked"); the first word of a text is skipped
_CAPITALISED = re.compile(r"(?:(?<=[a-z0-9,;:)] )|(?<=[(\[\"“']))[A-Z][A-Za-z0-9-]{2,}")
_ACRONYM = re.compile(r"(?<![A-Za-z0-9-])[A-Z][A-Z0-9-]*[A-Z][A-Za-z0-9-]*")  # "MGP", "(CAT)", "LLMs" anywhere
GROUNDED = 0.6  # of a description's content words (after its verb), the share its paper's title and abstract use
_VERB_FIRST = re.compile(r"[A-Za-z][a-z]+s\b")  # "proposes", "Predicts": a verb in the third person opens a description
TRANSLATION_KEPT = 0.9  # a Chinese question shorter than this (in content, see `keeps_content`) lost its topic
ABSTRACT_CHARS = 700  # of the abstract shown to the question writer: its problem and method, read in a few seconds on CPU
MIX = {"lookup": 0.36, "leave_out": 0.25, "near_miss": 0.13, "compare": 0.16, "followup": 0.10,
       "broad": 0.0}  # broad: only by --kind, so that an earlier seed's default set stays as it was
BROAD_MIN_PAPERS = 5  # a keyword of this many accepted papers is a topic a survey question can ask about
BROAD_TEMPLATES = ["Which papers study {topic}?", "Are there papers on {topic}?",
                   "What methods have been proposed for {topic}?", "What are the main challenges in {topic}?",
                   "How do recent papers approach {topic}?"]
# the same in Chinese, with the topic in the glossary's Chinese or as written (no model: translated whole, the small model
# took "What methods have been proposed for X?" for a question to itself, "你提出的这个问题是关于元学习的。"; translated
# alone, "web agent" became "研究论文的目的是什么？")
BROAD_TEMPLATES_ZH = ["哪些论文研究{topic}？", "有没有关于{topic}的论文？", "针对{topic}提出了哪些方法？", "{topic}的主要挑战是什么？",
                      "最近的论文如何处理{topic}？"]

# Platforms, domains and data sets for near-miss questions; only those no paper mentions are used.
ABSENT_CANDIDATES = {
    "platform": ["Cerebras wafer-scale engines", "Graphcore IPUs", "the Apple Watch", "the Nintendo Switch",
                 "ESP32 microcontrollers", "Arduino boards", "the Commodore 64", "PlayStation 5 consoles",
                 "Garmin sports watches", "Kindle e-readers", "Groq LPUs", "SambaNova chips", "a TI-84 calculator",
                 "Game Boy hardware", "smart refrigerators", "Tesla Dojo", "Zilog Z80 processors"],
    "domain": ["beekeeping", "curling", "wine tasting", "volcano monitoring", "avalanche forecasting",
               "knitting patterns", "bonsai care", "opera singing", "perfume design", "sheep herding",
               "lighthouse maintenance", "origami design", "the tea ceremony", "fly fishing", "sumo wrestling",
               "yacht racing", "church bell ringing", "taxidermy", "pottery glazing", "falconry",
               "competitive eating", "mushroom foraging", "stamp collecting", "tightrope walking"],
    "data set": ["the Voynich manuscript", "the Dead Sea Scrolls", "penguin colony counts", "Martian dust storm logs",
                 "medieval tax rolls", "whale song archives", "tree-ring chronologies", "lighthouse logbooks",
                 "Victorian weather diaries", "ancient Mayan codices"],
}
NEAR_MISS_TEMPLATES = {
    "platform": ["Which paper runs {topic} on {thing}?", "Has anyone deployed {topic} on {thing}?",
                 "How fast is {topic} on {thing}, according to the papers?"],
    "domain": ["Has any paper applied {topic} to {thing}?", "Is there work on {topic} for {thing}?",
               "Which papers use {topic} in {thing}?"],
    "data set": ["Which papers evaluate {topic} on {thing}?", "Has {topic} been tested on {thing}?"],
}
FOLLOWUP_TURNS = ["What are its main limitations?", "What data or benchmarks does it evaluate on?",
                  "How does it compare with earlier methods?", "What problem does it set out to solve?"]
FOLLOWUP_TURNS_ZH = ["它的主要局限是什么？", "它在哪些数据集或基准上做了评测？", "它和之前的方法相比怎么样？", "它想解决什么问题？"]
# The same turns without a word that points back (half of the generated ones, by their own seeded draw): a user in a
# conversation also asks "Which datasets were used?"
FOLLOWUP_TURNS_BARE = ["What are the main limitations?", "Which datasets and benchmarks were used?",
                       "How does the method compare with earlier work?", "What problem is being solved?"]
FOLLOWUP_TURNS_BARE_ZH = ["主要局限是什么？", "用了哪些数据集和基准？", "和之前的方法相比怎么样？", "要解决什么问题？"]

Ask = Callable[[str], str]  # a prompt -> the model's reply


@dataclass
class GeneratedSet:
    questions: list[dict]
    left_out: list[str]
    absent_terms: list[str]


def paper_vectors(snapshot: Snapshot) -> tuple[list[str], np.ndarray]:
    """One unit vector per paper (the mean of its chunks'), in a fixed order."""
    sums: dict[str, np.ndarray] = {}
    for cid, vector in zip(snapshot.ids, snapshot.vectors.astype(np.float32)):
        pid = cid.rsplit(":", 1)[0]
        sums[pid] = sums[pid] + vector if pid in sums else vector.copy()
    ids = sorted(sums)
    matrix = np.stack([sums[i] for i in ids])
    return ids, matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


def names_the_paper(question: str, paper: Paper, rare_names: frozenset[str] = frozenset()) -> bool:
    """Whether a question gives the paper away: its title's name, a name it introduces, a name of its title or
    abstract that few papers use (`rare_names`: "CRAMF", "AudioMCQ", "Disco"; not "LLM"), or a run of its title."""
    lowered = question.lower()
    names = introduced_names(paper.title, paper.abstract) | ({title_name(paper.title)} - {""})
    names |= {n for n in own_names(question) if n in rare_names and n in own_names(f"{paper.title} {paper.abstract}")}
    if any(re.search(rf"(?<![A-Za-z0-9]){re.escape(n.lower())}(?![A-Za-z0-9])", lowered) for n in names if len(n) >= 3):
        return True
    title = words(paper.title)
    asked = " ".join(words(question))
    return any(" ".join(title[i:i + TITLE_RUN]) in asked for i in range(len(title) - TITLE_RUN + 1))


def own_names(text: str) -> set[str]:
    """What could be a name, lowercased: capitalised words not opening a sentence ("Disco", "(Masked"), all-capital
    tokens anywhere ("CRAMF", "(MGP)"), coined names ("AudioMCQ")."""
    found = [m.group(0) for pattern in (_CAPITALISED, _ACRONYM) for m in pattern.finditer(text)]
    return {n.lower() for n in (*found, *coined_names(text))}


def rare_name_set(papers: Sequence[Paper]) -> frozenset[str]:
    """Names at most RARE_NAME_PAPERS papers use: a paper's own name, not the field's vocabulary ("LLM", "Transformer")."""
    counts: dict[str, int] = {}
    for p in papers:
        for n in own_names(f"{p.title} {p.abstract}"):
            counts[n] = counts.get(n, 0) + 1
    return frozenset(n for n, c in counts.items() if c <= RARE_NAME_PAPERS)


def clean_line(reply: str) -> str:
    """The first non-empty line of a model reply, without a label or quotes."""
    line = next((part.strip() for part in reply.strip().splitlines() if part.strip()), "")
    line = re.sub(r"^(question|问题|answer|phrase|translation|翻译)\s*[:：]\s*", "", line, flags=re.IGNORECASE)
    return line.strip(" \"'“”`")


def write_question(ask: Ask, paper: Paper, rare_names: frozenset[str] = frozenset()) -> str | None:
    """A question the paper's abstract answers, in the model's words, not naming the paper (None if it failed)."""
    question = clean_line(ask(GEN_QUESTION.format(abstract=paper.abstract[:ABSTRACT_CHARS])))
    if not question.endswith("?") or not 6 <= len(question.split()) <= 45 or names_the_paper(question, paper, rare_names):
        return None
    return question


def describe(ask: Ask, paper: Paper, rare_names: frozenset[str] = frozenset()) -> str | None:
    """A few words on what the paper does, starting with a verb, without its name."""
    phrase = clean_line(ask(GEN_DESCRIBE.format(abstract=paper.abstract[:ABSTRACT_CHARS]))).rstrip(".")
    phrase = re.sub(r"^(this paper|the paper|it)\s+", "", phrase, flags=re.IGNORECASE)
    if not 3 <= len(phrase.split()) <= 20 or names_the_paper(phrase, paper, rare_names):
        return None
    if not _VERB_FIRST.match(phrase):
        return None  # "TRIM-KV learns ...", "we evaluate ...", "Adaptive Guidance modulates ...": a name or no verb first
    if share_held(content_words(phrase)[1:], word_set(f"{paper.title} {paper.abstract[:ABSTRACT_CHARS]}")) < GROUNDED:
        return None  # words the abstract does not use: the model described something else
    return phrase[0].lower() + phrase[1:]


def keeps_content(chinese: str, english: str) -> bool:
    """Whether a translation still says about as much as its English: two Chinese characters or one Latin word
    per English content word, at least TRANSLATION_KEPT of them. The small model sometimes shortens a question
    to "该论文的主要贡献是什么？" ("What is the paper's main contribution?"), which no paper answers."""
    units = han_characters(chinese) / 2 + len(latin_words(chinese))
    return units >= TRANSLATION_KEPT * len(content_words(english))


def _translated(ask: Ask, prompt: str, english: str, strip: str = "") -> str | None:
    """The model's Chinese for `english` (asked with `prompt`), or None when it echoed it or dropped its content."""
    text = clean_line(ask(prompt.format(text=english))).rstrip(strip)
    return text if language(text) == "zh" and keeps_content(text, english) else None


def to_chinese(ask: Ask, question: str) -> str | None:
    return _translated(ask, GEN_TRANSLATE_ZH, question)


def phrase_in_chinese(ask: Ask, phrase: str) -> str | None:
    """A description ("proposes ...") in Chinese, without a closing stop (it goes inside a frame)."""
    return _translated(ask, GEN_TRANSLATE_PHRASE_ZH, phrase, strip="。.；;")


def framed_in_chinese(ask: Ask, frame: str, **phrases: str) -> str | None:
    """A question whose descriptions are translated one by one and set in a fixed Chinese `frame`, so none is lost."""
    done = {key: phrase_in_chinese(ask, phrase) for key, phrase in phrases.items()}
    return frame.format(**done) if all(done.values()) else None


def in_chinese(ask: Ask, question: str, described: Sequence[str] | None = None, frame: int = 0,
               topic: str | None = None) -> str | None:
    """A generated question in Chinese: a comparison (`described`: its two descriptions) in the Chinese of its frame
    (an index into GEN_COMPARE_FRAMES), a broad one (`topic`) in its BROAD_TEMPLATES_ZH frame, any other question
    translated whole."""
    if topic:  # the glossary's Chinese for it, else as written: "有没有关于web agent的论文？" is how it is asked
        return BROAD_TEMPLATES_ZH[frame].format(topic=chinese_of(topic) or topic)
    if described:
        return framed_in_chinese(ask, GEN_COMPARE_FRAMES_ZH[frame], one=described[0], other=described[1])
    return to_chinese(ask, question)


def absent(terms: Sequence[str], papers: Sequence[Paper]) -> list[str]:
    """The terms no paper's title, abstract or keywords mention (case-insensitive, as whole words)."""
    haystack = "\n".join(f"{p.title} {p.abstract} {' '.join(p.keywords)}" for p in papers).lower()
    keep = []
    for term in terms:
        core = re.sub(r"^(the|a|an)\s+", "", term.lower())
        pattern = r"[\s\-]+".join(re.escape(w) for w in core.split())
        if not re.search(rf"(?<!\w){pattern}(?!\w)", haystack):
            keep.append(term)
    return keep


def make_set(papers: Sequence[Paper], snapshot: Snapshot, ask: Ask, seed: int, n: int,
             progress: Callable[[str], None] = lambda text: None, mix: dict[str, float] | None = None) -> GeneratedSet:
    """The questions (see the module docstring); deterministic for a seed, a corpus and a model. `mix`: the share
    of each kind (MIX unless given; {"followup": 1.0} makes conversations only)."""
    rng = random.Random(seed)
    # their own draws: the rest of a seed's set is as it was before comparisons and follow-ups had other phrasings
    frames, phrasing = random.Random(f"frames-{seed}"), random.Random(f"followups-{seed}")
    own = rare_name_set(papers)
    by_id = {p.id: p for p in papers}
    ids, matrix = paper_vectors(snapshot)
    row = {pid: i for i, pid in enumerate(ids)}
    accepted = sorted(p.id for p in papers if p.status in STATUS_GROUPS["All accepted"] and p.id in row)
    rng.shuffle(accepted)
    pool = iter(accepted)
    wanted = {kind: round((MIX if mix is None else mix).get(kind, 0.0) * n) for kind in MIX}
    questions: list[dict] = []
    left_out: set[str] = set()
    used: set[str] = set()

    def neighbours(pid: str, low: float, high: float = 1.01) -> list[tuple[str, float]]:
        cos = matrix @ matrix[row[pid]]
        order = np.argsort(-cos)
        return [(ids[i], float(cos[i])) for i in order[1:400] if low <= cos[i] < high]

    def chinese() -> bool:
        return rng.random() < CHINESE_SHARE

    def add(kind: str, text: str, gold: list[str], also: list[str] = (), note: str = "", **extra) -> None:
        lang = "en"
        if chinese():
            translated = in_chinese(ask, text, extra.get("described"), extra.get("frame", 0), extra.get("topic"))
            if translated:
                extra = {**extra, "english": text}
                text, lang = translated, "zh"
        qid = f"G{seed}-{kind[:2].upper()}-{len(questions) + 1:03d}"
        questions.append({"qid": qid, "kind": {"leave_out": "unanswerable", "near_miss": "unanswerable", "broad": "lookup"}.get(kind, kind),
                          "lang": lang, "question": text, "gold": gold, "also_relevant": list(also),
                          "note": note, "generated": kind, **extra})
        progress(f"{qid} {lang} {text}")

    def draw() -> Paper:
        while True:
            pid = next(pool)
            if pid not in used and pid not in left_out:
                used.add(pid)
                return by_id[pid]

    # unanswerable by leave-out first: their papers (and neighbours) must not be anybody's gold
    while sum(q["generated"] == "leave_out" for q in questions) < wanted["leave_out"]:
        paper = draw()
        question = write_question(ask, paper, own)
        if question is None:
            continue
        gone = {paper.id} | {pid for pid, _ in neighbours(paper.id, LEAVE_OUT_NEIGHBOURS)}
        left_out |= gone
        add("leave_out", question, [], note=f"written from {paper.id}, which is left out with {len(gone) - 1} "
                                               f"papers close to it", left_out=sorted(gone))
    while sum(q["generated"] == "lookup" for q in questions) < wanted["lookup"]:
        paper = draw()
        question = write_question(ask, paper, own)
        if question is None:
            continue
        also = [pid for pid, _ in neighbours(paper.id, ALSO_RELEVANT) if pid not in left_out]
        add("lookup", question, [paper.id], also, note=f"written from the abstract of {paper.id}")
    while sum(q["generated"] == "compare" for q in questions) < wanted["compare"]:
        first = draw()
        pairs = [pid for pid, _ in neighbours(first.id, COMPARE_MIN, COMPARE_MAX)
                 if pid not in left_out and pid not in used and by_id[pid].status in STATUS_GROUPS["All accepted"]]
        if not pairs:
            continue
        second = by_id[pairs[rng.randrange(min(5, len(pairs)))]]
        used.add(second.id)
        one, other = describe(ask, first, own), describe(ask, second, own)
        if not one or not other:
            continue
        frame = frames.randrange(len(GEN_COMPARE_FRAMES))
        add("compare", GEN_COMPARE_FRAMES[frame].format(one=one, other=other), [first.id, second.id],
            note="two related papers, each described by what it does", described=[one, other], frame=frame)
    while sum(q["generated"] == "followup" for q in questions) < wanted["followup"]:
        paper = draw()
        opening = write_question(ask, paper, own)
        if opening is None:
            continue
        zh = chinese()
        if zh:
            opening = to_chinese(ask, opening) or opening
        zh = has_cjk(opening)
        turns = [{"question": opening, "gold": [paper.id]}]
        turn = rng.randrange(len(FOLLOWUP_TURNS))
        bare = phrasing.random() < 0.5
        follow = ((FOLLOWUP_TURNS_BARE_ZH if bare else FOLLOWUP_TURNS_ZH) if zh else
                  (FOLLOWUP_TURNS_BARE if bare else FOLLOWUP_TURNS))[turn]
        turns.append({"question": follow, "gold": [paper.id]})
        related = [pid for pid, _ in neighbours(paper.id, COMPARE_MIN, COMPARE_MAX) if pid not in left_out]
        if related and rng.random() < 0.5:
            other = by_id[related[0]]
            phrase = describe(ask, other, own)
            if phrase:
                text = f"How does it differ from the paper that {phrase}?"
                turns.append({"question": (framed_in_chinese(ask, GEN_FOLLOWUP_COMPARE_ZH, other=phrase) or text)
                              if zh else text,
                              "gold": [paper.id, other.id]})
        qid = f"G{seed}-FO-{len(questions) + 1:03d}"
        questions.append({"qid": qid, "kind": "followup", "lang": "zh" if zh else "en", "turns": turns,
                          "gold": sorted({g for t in turns for g in t["gold"]}), "also_relevant": [],
                          "note": "a lookup, then turns that lean on it", "generated": "followup"})
        progress(f"{qid} {' / '.join(t['question'] for t in turns)}")
    kept = [p for p in papers if p.id not in left_out]
    topics = [k for k, c in _keyword_counts(kept).items() if c >= 5 and 1 <= len(k.split()) <= 4]
    rng.shuffle(topics)
    found_absent: list[str] = []
    for category, terms in ABSENT_CANDIDATES.items():
        found_absent += [f"{category}:{t}" for t in absent(terms, papers)]
    rng.shuffle(found_absent)
    for i in range(wanted["near_miss"]):
        category, thing = found_absent[i % len(found_absent)].split(":", 1)
        topic = topics[i % len(topics)]
        template = NEAR_MISS_TEMPLATES[category][rng.randrange(len(NEAR_MISS_TEMPLATES[category]))]
        add("near_miss", template.format(topic=topic, thing=thing), [],
            note=f"'{topic}' is a real topic; no title, abstract or keyword mentions {thing}")
    if wanted["broad"]:  # its own draws: the kinds above are as they were without it
        surveyed = random.Random(f"broad-{seed}")
        tagged = _keyword_papers([p for p in kept if p.status in STATUS_GROUPS["All accepted"]])
        fields = sorted(k for k, ids in tagged.items() if len(ids) >= BROAD_MIN_PAPERS and 1 <= len(k.split()) <= 4)
        surveyed.shuffle(fields)
        for topic in fields[:wanted["broad"]]:
            frame = surveyed.randrange(len(BROAD_TEMPLATES))
            add("broad", BROAD_TEMPLATES[frame].format(topic=topic), sorted(tagged[topic]),
                note=f"'{topic}' is a keyword of {len(tagged[topic])} accepted papers, all gold", topic=topic, frame=frame)
    top_up_chinese(questions, ask, rng)
    return GeneratedSet(questions, sorted(left_out), [t.split(":", 1)[1] for t in found_absent])


def top_up_chinese(questions: list[dict], ask: Ask, rng: random.Random, share: float = CHINESE_SHARE) -> int:
    """Translate randomly drawn English single-turn questions until `share` of all are Chinese (a translation
    can fail: the model may echo the English); returns how many were translated."""
    english = [q for q in questions if q["lang"] == "en" and "question" in q]
    rng.shuffle(english)
    missing = math.ceil(share * len(questions)) - (len(questions) - sum(q["lang"] == "en" for q in questions))
    done = 0
    for q in english:
        if done >= missing:
            break
        translated = in_chinese(ask, q["question"], q.get("described"), q.get("frame", 0), q.get("topic"))
        if translated:
            q.update(question=translated, lang="zh", english=q["question"])
            done += 1
    return done


def _keyword_papers(papers: Sequence[Paper]) -> dict[str, list[str]]:
    """Each (English, lower-cased) keyword with the ids of the papers that list it."""
    found: dict[str, list[str]] = {}
    for p in papers:
        for k in {k.strip().lower() for k in p.keywords}:
            if k and not has_cjk(k):
                found.setdefault(k, []).append(p.id)
    return dict(sorted(found.items()))


def _keyword_counts(papers: Sequence[Paper]) -> dict[str, int]:
    return {k: len(ids) for k, ids in _keyword_papers(papers).items()}


def write_set(out: Path, generated: GeneratedSet, papers: Sequence[Paper], snapshot: Snapshot, seed: int,
              corpus: Path) -> Path:
    """questions.jsonl, the test corpus (corpus.jsonl.gz, without the left-out papers) and its snapshot."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in generated.questions),
                                         encoding="utf-8")
    gone = set(generated.left_out)
    test_corpus = out / "corpus.jsonl.gz"
    with test_corpus.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        for p in papers:
            if p.id not in gone:
                f.write((json.dumps(p.to_record(), ensure_ascii=False) + "\n").encode("utf-8"))
    keep = [i for i, cid in enumerate(snapshot.ids) if cid.rsplit(":", 1)[0] not in gone]
    write_snapshot(snapshot_path(test_corpus), Snapshot(snapshot.identity, [snapshot.ids[i] for i in keep],
                                                        [snapshot.hashes[i] for i in keep], snapshot.vectors[keep]))
    kinds: dict[str, int] = {}
    for q in generated.questions:
        kinds[q["generated"]] = kinds.get(q["generated"], 0) + 1
    manifest = {"seed": seed, "source_corpus": str(corpus), "questions": len(generated.questions), "by_kind": kinds,
                "chinese": sum(q["lang"] == "zh" for q in generated.questions), "left_out_papers": len(gone),
                "test_corpus_papers": len(papers) - len(gone), "absent_terms": generated.absent_terms}
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return out / "questions.jsonl"


def load_for_generation(corpus: Path) -> tuple[list[Paper], Snapshot]:
    from rag.corpus.papers import load_file
    from rag.errors import CorpusError

    snapshot = read_snapshot(snapshot_path(corpus))
    if snapshot is None:
        raise CorpusError(f"{corpus} has no index snapshot ({snapshot_path(corpus).name}): run "
                          f"`paperchat snapshot build {corpus}` first (the set needs every paper's vector).")
    return load_file(corpus).papers, snapshot
