"""Ask a generated set's single questions again in a user's chat voice, to see whether the decline score (fitted on
the generated set's abstract-like questions) keeps questions typed the way people type them.

The model rewrites each English lookup and unanswerable question (prompts.GEN_CHAT_VOICE: shorter, everyday words,
"has anyone tried ...?", "is there a paper that ...?"); the papers and the labels stay, so a rewritten lookup still has its
gold paper and a rewritten leave-out question is still unanswerable. A rewrite that names the paper (the generator's
own check), is not a question of 5-40 words, or takes under half of its content words from the question (the
small model explained the topic by analogies) is dropped; a greeting is cut. Chinese questions, comparisons and conversations are left out.

    python benchmarks/chat_voice.py DIR/questions.jsonl --corpus DIR/corpus.jsonl.gz -o voice.jsonl
    PAPERCHAT_DATA_DIR=<DIR's test index> paperchat eval voice.jsonl --retrieval-only --json --rows rows.jsonl
    python benchmarks/decline_fit.py rows.jsonl --apply
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.eval.generate import clean_line, load_for_generation, names_the_paper, rare_name_set  # noqa: E402
from rag.prompts import GEN_CHAT_VOICE  # noqa: E402
from rag.text import content_words, share_held, word_set  # noqa: E402

KINDS = ("lookup", "unanswerable")


GREETING = re.compile(r"^(?:hey|hi|hello)\b[^.!?]*[.!?,]\s*", re.IGNORECASE)
OWN_WORDS = 0.5  # of a rewrite's content words, the share the question held: a rewrite that explains adds its own


def voiced(ask, question: dict, papers: dict, rare_names: frozenset[str]) -> dict | None:
    """`question` in a chat voice, or None when the rewrite names its paper, is not a question or says more than it."""
    text = GREETING.sub("", clean_line(ask(GEN_CHAT_VOICE.format(question=question["question"]))))
    if not text.endswith("?") or not 5 <= len(text.split()) <= 40:
        return None
    if share_held(content_words(text), word_set(question["question"])) < OWN_WORDS:
        return None
    written_from = [papers[pid] for pid in question.get("gold", []) if pid in papers]
    if any(names_the_paper(text, paper, rare_names) for paper in written_from):
        return None
    return {**question, "qid": question["qid"] + "-V", "question": text, "voice": "chat", "before": question["question"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions")
    parser.add_argument("--corpus", required=True, help="the corpus the set was generated from, or its test corpus")
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()

    from langchain_core.messages import HumanMessage

    from rag.pipeline import build_pipeline
    from rag.settings import load_settings

    rows = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [q for q in rows if q.get("kind") in KINDS and q.get("lang") == "en" and q.get("question")]
    papers_list, _ = load_for_generation(Path(args.corpus))
    papers, rare = {p.id: p for p in papers_list}, rare_name_set(papers_list)
    out, dropped, started = [], 0, time.perf_counter()
    with build_pipeline(load_settings(env_file=None)) as pipeline:
        llm = pipeline.llm.bind(max_tokens=90, temperature=0.0)

        def ask(prompt: str) -> str:
            return str(llm.invoke([HumanMessage(prompt)]).content)

        for q in chosen:
            made = voiced(ask, q, papers, rare)
            if made is None:
                dropped += 1
                continue
            out.append(made)
            print(f"{made['qid']}: {made['question']}", file=sys.stderr, flush=True)
    Path(args.out).write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in out), encoding="utf-8")
    print(f"{len(out)} of {len(chosen)} English lookups and unanswerable questions rewritten in a chat voice "
          f"({dropped} rewrites dropped) in {time.perf_counter() - started:.0f} s: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
