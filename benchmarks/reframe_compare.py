"""Ask a generated set's comparisons again in the phrasings `paperchat evalset` now draws from
(rag.prompts.GEN_COMPARE_FRAMES and their Chinese), so a set written in the one older phrasing ("How does the paper
that X differ from the one that Y?", "X的论文与Y的论文有什么不同？") measures how the others are read. The papers, the
descriptions and the labels stay; only the words around the descriptions change. A Chinese comparison's descriptions
are read back from its question by the router; one it cannot read is left as it was.

    python benchmarks/reframe_compare.py DIR/questions.jsonl -o reframed.jsonl [--seed 7]   # a phrasing each, drawn
    python benchmarks/reframe_compare.py DIR/questions.jsonl -o every.jsonl --every         # each in every phrasing
    PAPERCHAT_DATA_DIR=<index> paperchat eval reframed.jsonl --json --rows rows.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.prompts import GEN_COMPARE_FRAMES, GEN_COMPARE_FRAMES_ZH  # noqa: E402
from rag.question.router import descriptions  # noqa: E402


def reframed(question: dict, frame: int) -> dict:
    """The comparison `question` asked in phrasing `frame`; the same dict when it is no comparison or its
    Chinese descriptions cannot be read back."""
    if question.get("kind") != "compare" or len(question.get("described") or ()) != 2:
        return question
    if question["lang"] == "zh":
        parts = descriptions(question["question"])
        if len(parts) != 2:
            return question
        text = GEN_COMPARE_FRAMES_ZH[frame].format(one=parts[0], other=parts[1])
    else:
        one, other = question["described"]
        text = GEN_COMPARE_FRAMES[frame].format(one=one, other=other)
    return {**question, "question": text, "frame": frame}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions")
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", action="store_true", help="each comparison once in every phrasing (qid-F<k>)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.every:
        out = [{**reframed(q, k), "qid": f"{q['qid']}-F{k}"} for q in rows if q.get("kind") == "compare"
               for k in range(len(GEN_COMPARE_FRAMES))]
    else:
        out = [reframed(q, rng.randrange(len(GEN_COMPARE_FRAMES))) for q in rows]
    Path(args.out).write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in out), encoding="utf-8")
    frames = collections.Counter((q["lang"], q.get("frame", "unchanged")) for q in out if q.get("kind") == "compare")
    print(f"{len(out)} questions written to {args.out}; comparisons by (language, phrasing): "
          f"{dict(sorted(frames.items(), key=str))}")


if __name__ == "__main__":
    main()
