"""Broad questions answered end to end (`paperchat evalset --kind broad`, then `paperchat eval ... --rows R`): how
many were answered, by what they were declined, and how many of the sources and cited papers are on the question's
topic. A keyword is a narrow gold label (papers about multi-task learning include some tagged "Multitask Learning"),
so a paper counts as on topic when its title, abstract or keywords hold every word of the topic. No model call:

    python benchmarks/broad_topics.py R BR_DIR/questions.jsonl [--corpus corpus/iclr2026.jsonl.gz]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.corpus.papers import load_file  # noqa: E402
from rag.text import content_words, holds, word_set  # noqa: E402


def ids(value) -> list[str]:
    """A rows file's list column (written as a list or as its Python text)."""
    return list(ast.literal_eval(value) if isinstance(value, str) else value or [])


def truth(value) -> bool:
    return value in (True, "True")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows")
    ap.add_argument("questions")
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1] / "corpus" / "iclr2026.jsonl.gz"))
    args = ap.parse_args()
    papers = {p.id: p for p in load_file(args.corpus).papers}
    questions = {q["qid"]: q for q in map(json.loads, Path(args.questions).read_text(encoding="utf-8").splitlines())}
    rows = [r for r in map(json.loads, Path(args.rows).read_text(encoding="utf-8").splitlines())
            if "refused" in r and questions.get(r["qid"], {}).get("generated") == "broad"]

    def on_topic(pid: str, topic: str) -> bool:
        p = papers[pid]
        have = word_set(f"{p.title} {p.abstract} {' '.join(p.keywords)}")
        return all(holds(have, w) or holds(have, w.replace("-", "")) for w in content_words(topic))

    shares: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r in rows:
        q = questions[r["qid"]]
        retrieved, cited = ids(r["retrieved"]), ids(r["cited"])
        answered = not truth(r["refused"])
        for lang in ("all", r["lang"]):
            shares[("answered (not declined)", lang)].append(answered)
            shares[("declined by the yes/no", lang)].append(r.get("refusal") == "judge")
            shares[("declined in code", lang)].append(r.get("refusal") == "code")
            shares[("the sources on topic", lang)] += [on_topic(p, q["topic"]) for p in retrieved]
            if answered:
                shares[("cited papers on topic", lang)] += [on_topic(p, q["topic"]) for p in cited]
                shares[("cites a keyword-tagged paper", lang)].append(truth(r["cites_gold"]))
                shares[("in the question's language", lang)].append(truth(r["in_question_language"]))
            shares[("citations outside the retrieved papers", lang)].append(int(r["cited_not_retrieved"]) > 0)
    langs = [("all", "all"), ("en", "English"), ("zh", "Chinese")]
    print("| | " + " | ".join(f"{name} ({len(shares[('answered (not declined)', lang)])})" for lang, name in langs)
          + " |\n|---|---|---|---|")
    for label in dict.fromkeys(label for label, _ in shares):
        cells = []
        for lang, _ in langs:
            got = shares[(label, lang)]
            cells.append(f"{sum(got) / len(got):.3f} ({sum(got)} of {len(got)})" if got else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    frames = defaultdict(lambda: [0, 0])
    for r in rows:
        question = questions[r["qid"]]
        frame = frames[question.get("english", question["question"]).replace(question["topic"], "X")]
        frame[0] += 1
        frame[1] += truth(r["refused"])
    print("\n| phrasing | questions | declined |\n|---|---|---|")
    for frame, (n, declined) in sorted(frames.items()):
        print(f"| {frame} | {n} | {declined} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
