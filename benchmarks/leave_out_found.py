"""Were the generated leave-out questions about their own paper? For each leave-out question of a generated set's
judge rows (benchmarks/answer_judge.py), its English search text (the row's `query`) is searched as the app searches
it in the FULL index, where the paper it was written from is still present, and that paper's rank is read. The
shipped decision (rag.settings.MEASURED_JUDGE applied to the row's score, yes/no and closeness, as
rag.pipeline does) is then reported by that rank and by language, with the set's lookups kept for reference.

A question whose own paper is not among the first few even while it is indexed asks something other papers answer
as well ("What is the main objective of this study?"); its label "unanswerable" is doubtful, and declining it is not
what the product should be judged on. No model call (the rows hold the model's columns):

    PAPERCHAT_DATA_DIR=<full index> python benchmarks/leave_out_found.py \
        --set judge_lo.jsonl LO_DIR/questions.jsonl [--set judge_lk.jsonl LK_DIR/questions.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_judge import declined, shipped_rule  # noqa: E402

from rag.retrieve.filters import Filters  # noqa: E402

DEPTH = 20  # how deep the full index is read for the paper
BUCKETS = [(1, 1, "found first"), (2, 4, "found 2nd-4th"), (5, DEPTH, f"found 5th-{DEPTH}th"),
           (DEPTH + 1, 10**9, f"not in the first {DEPTH}")]


def source_paper(question: dict) -> str:
    """The paper a leave-out question was written from (its note: "written from <id>, which is left out ...")."""
    found = re.search(r"written from (\S+?),", question.get("note", ""))
    if not found:
        raise SystemExit(f"{question['qid']}: no 'written from <id>' in its note; is this a leave-out question?")
    return found.group(1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", nargs=2, action="append", required=True, metavar=("ROWS", "QUESTIONS"),
                    help="judge rows and the questions.jsonl they were collected on (repeatable)")
    args = ap.parse_args()

    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from rag.pipeline import build_pipeline
    from rag.settings import load_settings

    settings = load_settings()
    judged, alone = shipped_rule(settings)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    # a fake chat model: the rows hold the English search text, so nothing here needs the model
    with build_pipeline(settings, llm=FakeListChatModel(responses=["unused"])) as pipeline:
        for rows_path, questions_path in args.set:
            questions = {q["qid"]: q for q in map(json.loads, Path(questions_path).read_text(encoding="utf-8").splitlines())}
            for row in map(json.loads, Path(rows_path).read_text(encoding="utf-8").splitlines()):
                question = questions[row["qid"]]
                if row["kind"] == "lookup":
                    counts[("lookups (kept)", row["lang"])][0] += 1
                    counts[("lookups (kept)", row["lang"])][1] += not declined(row, judged, alone)
                    continue
                if question.get("generated") != "leave_out":
                    continue
                intent = pipeline.route(row["query"])
                query = pipeline.search_query(intent)
                hits = pipeline.retrieve(query.all, Filters().narrowed_by(intent.filters), DEPTH, query.referred,
                                         query.described)
                ids = [h.paper.id for h in hits]
                paper = source_paper(question)
                rank = ids.index(paper) + 1 if paper in ids else DEPTH + 1
                bucket = next(label for low, high, label in BUCKETS if low <= rank <= high)
                for key in ((bucket, row["lang"]), ("leave-out, all", row["lang"]),
                            *([("leave-out, found 1st-4th", row["lang"])] if rank <= 4 else [])):
                    counts[key][0] += 1
                    counts[key][1] += declined(row, judged, alone)
                print(f"{row['qid']} {row['lang']} rank {rank if rank <= DEPTH else '-'} "
                      f"{'declined' if declined(row, judged, alone) else 'kept'}: {row['query'][:80]}", file=sys.stderr)
    print(f"shipped rule: before {judged.before}, threshold {judged.threshold}; a leave-out question's own paper "
          f"searched in the full index (its rank), declined share; lookups: kept share")
    print(f"| questions | all | English | Chinese |\n|---|---|---|---|")
    order = ["leave-out, all", "leave-out, found 1st-4th", *[label for _, _, label in BUCKETS], "lookups (kept)"]
    for label in order:
        cells = []
        for langs in (("en", "zh"), ("en",), ("zh",)):
            n = sum(counts[(label, lang)][0] for lang in langs)
            k = sum(counts[(label, lang)][1] for lang in langs)
            cells.append(f"{k / n:.3f} (n {n})" if n else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
