"""Calibrate and check the cross-lingual claim check (rag.answer.support) on generated Chinese claims.

    python benchmarks/claim_check_zh.py --pairs 60 --seed 7 --out /tmp/claims_zh.jsonl
    python benchmarks/claim_check_zh.py --claims /tmp/claims_zh.jsonl        # re-score without the model

Pairs of related accepted papers (P, Q: cosine between the generated set's COMPARE_MIN and COMPARE_MAX) are drawn
at random from the shipped corpus. For each, one sentence of each abstract (not the first) is restated in Chinese by
the bundled model (prompts.GEN_CLAIM_ZH), the way an answer restates it. Each claim is then judged twice: cited to
its own paper (supported) and cited to the other one (unsupported: a claim of another retrieved paper given to the
wrong one, the commonest error in the hand-labeled Chinese answers). Printed: the multilingual cosine of the claim
to the cited paper's closest sentence, and the curve of supported claims kept against misattributed ones caught per
threshold; then the shipped judge against the hand labels (benchmarks/support_labels.jsonl, read from ../shared by
path). Every figure names the CPU it ran on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rag.answer.support import sentences_of  # noqa: E402
from rag.models.embeddings import CROSS_LINGUAL_FLOOR, SentenceSimilarity  # noqa: E402
from rag.eval.generate import COMPARE_MAX, COMPARE_MIN, clean_line, load_for_generation, paper_vectors  # noqa: E402
from rag.prompts import GEN_CLAIM_ZH  # noqa: E402
from rag.retrieve.filters import STATUS_GROUPS  # noqa: E402
from rag.text import has_cjk, split_sentences  # noqa: E402


def cpu() -> str:
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    return f"{model}; " + " ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags)


def generate(pairs: int, seed: int, corpus: Path) -> list[dict]:
    from langchain_core.messages import HumanMessage

    from rag.pipeline import build_pipeline
    from rag.settings import load_settings

    papers, snapshot = load_for_generation(corpus)
    by_id = {p.id: p for p in papers}
    ids, matrix = paper_vectors(snapshot)
    row = {pid: i for i, pid in enumerate(ids)}
    rng = random.Random(seed)
    accepted = sorted(p.id for p in papers if p.status in STATUS_GROUPS["All accepted"] and p.id in row)
    rng.shuffle(accepted)
    out: list[dict] = []
    with build_pipeline(load_settings(env_file=None)) as pipeline:
        llm = pipeline.llm.bind(max_tokens=120)
        for pid in accepted:
            if len(out) >= 4 * pairs:
                break
            cos = matrix @ matrix[row[pid]]
            near = [ids[i] for i in np.argsort(-cos)[1:50] if COMPARE_MIN <= cos[i] < COMPARE_MAX]
            if not near:
                continue
            pair = (by_id[pid], by_id[near[0]])
            claims = []
            for paper in pair:
                sentences = [s for s in split_sentences(paper.abstract)[1:] if len(s.split()) >= 8]
                if not sentences:
                    break
                sentence = sentences[rng.randrange(len(sentences))]
                zh = clean_line(str(llm.invoke([HumanMessage(GEN_CLAIM_ZH.format(text=sentence))]).content))
                if not has_cjk(zh):
                    break
                claims.append((paper, sentence, zh))
            if len(claims) < 2:
                continue
            for (paper, sentence, zh), other in zip(claims, reversed(pair)):
                out.append({"claim": zh, "from": sentence, "cited": paper.id, "other": other.id, "label": True})
                out.append({"claim": zh, "from": sentence, "cited": other.id, "other": paper.id, "label": False})
                print(json.dumps(out[-2], ensure_ascii=False), file=sys.stderr, flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", default=str(ROOT / "corpus/iclr2026.jsonl.gz"))
    ap.add_argument("--out", help="write the generated claims here (JSONL)")
    ap.add_argument("--claims", help="score these generated claims instead of generating")
    args = ap.parse_args()
    print(f"CPU: {cpu()}")
    if args.claims:
        claims = [json.loads(line) for line in Path(args.claims).read_text(encoding="utf-8").splitlines() if line]
    else:
        claims = generate(args.pairs, args.seed, Path(args.corpus))
        if args.out:
            Path(args.out).write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in claims), "utf-8")
    from rag.corpus.papers import load_file

    papers = {p.id: p for p in load_file(args.corpus).papers}
    judge = SentenceSimilarity()
    scores = [judge(c["claim"], sentences_of(papers[c["cited"]])) for c in claims]
    good = sorted(s for s, c in zip(scores, claims) if c["label"])
    bad = sorted(s for s, c in zip(scores, claims) if not c["label"])
    print(f"{len(claims)} generated claims ({len(good)} cited to their own paper, {len(bad)} to the other one)")
    print("threshold  supported kept  misattributed caught")
    for t in np.arange(0.78, 0.921, 0.01):
        print(f"  {t:.2f}       {np.mean([s >= t for s in good]):.3f}          {np.mean([s < t for s in bad]):.3f}")
    pick = float(np.quantile(good, 0.05))
    print(f"5th percentile of the supported claims' cosine (keeps 0.95 of them): {pick:.3f}; "
          f"misattributed caught there: {np.mean([s < pick for s in bad]):.3f}; shipped floor "
          f"{CROSS_LINGUAL_FLOOR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
