"""Write rag/common_words.txt: the words of ML abstracts too common to be a question's topic word.

    python scripts/common_words.py [corpus/iclr2026.jsonl.gz]

A word is common when more than `RARE_SHARE` of the corpus's papers use it (in title or abstract), the share
under which the coverage check (rag.answer.coverage) calls a word rare. The list lets a small index (19 papers,
where every word is in few of them) tell a rare topic word ("honeybee") from an ordinary one ("compression")
the way the whole conference does. Sorted, one word per line: the same corpus gives the same file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.answer.coverage import RARE_SHARE  # noqa: E402
from rag.corpus.papers import load_file  # noqa: E402
from rag.text import COMMON_WORDS, query_terms, stem  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "corpus" / "iclr2026.jsonl.gz"))
    args = ap.parse_args()
    papers = load_file(args.corpus).papers
    df = Counter(t for p in papers for t in set(query_terms(f"{p.title} {p.abstract}")))
    words = [t for t, n in df.items() if n > RARE_SHARE * len(papers)]
    common = sorted({*words, *map(stem, words)})  # a question's "compressing" is looked up by its stem too
    COMMON_WORDS.write_text("".join(f"{t}\n" for t in common), encoding="utf-8")
    print(f"{len(words):,} common words (with their stems: {len(common):,} lines) of {len(df):,} in {len(papers):,} "
          f"papers -> {COMMON_WORDS}")


if __name__ == "__main__":
    main()
