"""Similar papers on the full corpus: paste a paper's own abstract, is that paper first (hit@1)?

Also measures the "nothing close" threshold: the best cosine of real abstracts to their nearest *other*
paper versus that of off-topic pasted texts.

    PAPERCHAT_DATA_DIR=/work/fullidx8b .venv/bin/python benchmarks/similar_hit.py \
        ../shared/data/iclr2026.jsonl.gz --n 200 --seed 8
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from rag.corpus.papers import load_corpus
from rag.pipeline import build_pipeline
from rag.settings import load_settings

OFF_TOPIC = [
    "Preheat the oven to 180 degrees. Mix flour, sugar and butter, then bake the cake for forty minutes until golden.",
    "The city council approved a new budget for road repairs and public parks after a long debate on Tuesday.",
    "Our hiking trip through the Alps lasted two weeks, with breathtaking views of glaciers and quiet villages.",
    "The football team won the championship final after a penalty shootout in front of sixty thousand fans.",
    "This apartment has two bedrooms, a sunny balcony, a renovated kitchen and is close to the train station.",
    "Water your tomato plants every morning, prune the side shoots, and add compost to the soil each month.",
    "The novel follows a young woman who inherits her grandmother's bakery in a small coastal town in Maine.",
    "Shares of the retailer fell sharply after quarterly sales missed expectations during the holiday season.",
    "To change a flat tire, loosen the lug nuts, lift the car with the jack and replace the wheel with the spare.",
    "The museum's new exhibition shows impressionist paintings of gardens, rivers and nineteenth-century Paris.",
    "Please remember to bring your passport, the signed consent form and a packed lunch for the school trip.",
    "Symptoms of the common cold include a runny nose, sore throat and mild fever lasting about a week.",
    "The wedding ceremony will take place in the chapel, followed by dinner and dancing in the garden.",
    "Knit the scarf in garter stitch with chunky wool, casting on forty stitches on eight millimetre needles.",
    "The medieval castle was built in the twelfth century and besieged three times during the civil war.",
    "Our plumbing service repairs leaking pipes, installs water heaters and unclogs drains around the clock.",
    "Jazz musicians improvised on the standard for twenty minutes while the audience clapped along.",
    "The ferry to the island leaves every hour from the harbour; tickets can be bought at the kiosk.",
    "Volcanic eruptions release ash and sulfur dioxide that can cool the climate for a year or two.",
    "Brush your dog's coat weekly and trim its nails to keep it comfortable and healthy.",
]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    pipeline = build_pipeline(load_settings(None))
    papers = load_corpus([args.corpus]).papers
    sample = random.Random(args.seed).sample(papers, args.n)
    out: dict = {"n": args.n, "seed": args.seed, "papers_in_index": len(pipeline.index.paper_ids())}
    for mode in ("abstract", "title+abstract"):
        hits, times = 0, []
        for paper in sample:
            text = paper.abstract if mode == "abstract" else f"{paper.title}. {paper.abstract}"
            t0 = time.perf_counter()
            result = pipeline.similar(text=text, k=5)
            times.append(time.perf_counter() - t0)
            hits += bool(result.papers) and result.papers[0].paper.id == paper.id
        out[mode] = {"hit@1": hits / args.n, "p50_s": round(statistics.median(times), 4),
                     "p95_s": round(pct(times, 0.95), 4)}
    nearest_other, times = [], []
    for paper in sample:  # "papers like this one": its best other paper
        t0 = time.perf_counter()
        result = pipeline.similar(paper_id=paper.id, k=5)
        times.append(time.perf_counter() - t0)
        nearest_other.append(result.best)
    off = [pipeline.similar(text=t, k=5).best for t in OFF_TOPIC]
    out["like_this_one"] = {"p50_s": round(statistics.median(times), 4), "p95_s": round(pct(times, 0.95), 4)}
    out["nearest_other_cosine"] = {"min": round(min(nearest_other), 3), "p01": round(pct(nearest_other, 0.01), 3),
                                   "p05": round(pct(nearest_other, 0.05), 3),
                                   "median": round(statistics.median(nearest_other), 3)}
    out["off_topic_cosine"] = {"n": len(off), "max": round(max(off), 3), "median": round(statistics.median(off), 3)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
