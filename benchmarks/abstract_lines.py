"""How many of a corpus's abstracts carry a PDF's line breaks, and how many sentence fragments each way of reading
them yields: split at every line (`split_sentences`, right for a model's answer, whose lines are items) against
`abstract_sentences` (the line breaks inside a sentence undone first). A fragment is a sentence of at least 6 words
that does not begin like a sentence (a capital, a digit, a bracket) or does not end like one (. ! ? : ; or a closing
bracket or quote). No model, no index:

    python benchmarks/abstract_lines.py [corpus/iclr2026.jsonl.gz]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.corpus.papers import load_file  # noqa: E402
from rag.text import abstract_sentences, split_sentences  # noqa: E402

MIN_WORDS = 6  # rag.retrieve.passages.MIN_SENTENCE_WORDS: shorter ones are never quoted
_BEGINS = re.compile(r"[A-Z0-9(\[$\\\"“]")
_ENDS = re.compile(r"[.!?:;)\]\"”]$")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=str(Path(__file__).resolve().parents[1] / "corpus" / "iclr2026.jsonl.gz"))
    args = ap.parse_args()
    abstracts = [p.abstract for p in load_file(args.corpus).papers]
    broken = [a for a in abstracts if "\n" in a.strip()]
    inside = sum(len(re.findall(r"[^.!?:;。！？\n]\n(?!\s*\n)", a)) for a in broken)
    hyphenated = sum(len(re.findall(r"[A-Za-z]-\n[A-Za-z]", a)) for a in broken)
    print(f"{len(abstracts)} abstracts; {len(broken)} with line breaks; {inside} breaks inside a sentence, {hyphenated} "
          f"of them inside a hyphen-broken word")
    print("| read as | sentences (>= 6 words) | fragments | share | abstracts with a fragment |\n|---|---|---|---|---|")
    for label, split in (("every line a sentence (split_sentences)", split_sentences),
                         ("abstract_sentences (line breaks undone)", abstract_sentences)):
        sentences = fragments = having = 0
        for abstract in abstracts:
            kept = [s for s in split(abstract) if len(s.split()) >= MIN_WORDS]
            bad = sum(1 for s in kept if not (_BEGINS.match(s) and _ENDS.search(s)))
            sentences, fragments, having = sentences + len(kept), fragments + bad, having + bool(bad)
        print(f"| {label} | {sentences} | {fragments} | {fragments / sentences:.4f} | {having} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
