"""Variants of a generated set's conversations, to measure how follow-ups are read when they are phrased otherwise:

* bare: each second turn without the word that points back ("What are its main limitations?" -> "What are the main
  limitations?", rag.eval.generate.FOLLOWUP_TURNS_BARE and its Chinese); the papers and labels stay.
* new_topic: each conversation's opening followed by the next conversation's opening, a question on another paper
  that must not be read as a follow-up (its gold is that paper).

    python benchmarks/followup_variants.py DIR/questions.jsonl -o DIR2
    PAPERCHAT_DATA_DIR=<index> paperchat eval DIR2/bare.jsonl --retrieval-only --kind followup --json --rows rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.eval.generate import (FOLLOWUP_TURNS, FOLLOWUP_TURNS_BARE, FOLLOWUP_TURNS_BARE_ZH,  # noqa: E402
                               FOLLOWUP_TURNS_ZH)

BARE = {**dict(zip(FOLLOWUP_TURNS, FOLLOWUP_TURNS_BARE)), **dict(zip(FOLLOWUP_TURNS_ZH, FOLLOWUP_TURNS_BARE_ZH))}


def bare(conversation: dict) -> dict:
    turns = [{**t, "question": BARE.get(t["question"], t["question"])} for t in conversation["turns"]]
    return {**conversation, "turns": turns, "qid": conversation["qid"] + "-B"}


def new_topics(conversations: list[dict]) -> list[dict]:
    out = []
    for one, other in zip(conversations, conversations[1:] + conversations[:1]):
        turns = [one["turns"][0], other["turns"][0]]
        out.append({**one, "qid": one["qid"] + "-N", "turns": turns,
                    "gold": sorted({g for t in turns for g in t["gold"]}),
                    "lang": "zh" if "zh" in (one["lang"], other["lang"]) else "en",
                    "note": f"the opening of {other['qid']} asked after the opening of {one['qid']}"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions")
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    conversations = [q for q in rows if q.get("kind") == "followup"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, made in (("bare", [bare(c) for c in conversations]), ("new_topic", new_topics(conversations))):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in made),
                                           encoding="utf-8")
        changed = sum(q["turns"][1]["question"] != c["turns"][1]["question"] for q, c in zip(made, conversations))
        print(f"{out / name}.jsonl: {len(made)} conversations, {changed} second turns rephrased or replaced")


if __name__ == "__main__":
    main()
