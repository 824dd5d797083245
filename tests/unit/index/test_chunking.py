import dataclasses

import tiktoken

from rag.index.chunking import body_of, chunk_paper, chunk_papers, make_splitter, paper_from_metadata
from rag.corpus.papers import Paper
from rag.offline import prime_tiktoken
from rag.settings import ChunkingSettings


def long_paper() -> Paper:
    sentences = " ".join(f"Sentence number {i} talks about sparse attention and memory." for i in range(120))
    return Paper(id="Long000001", title="Sparse Things", abstract=sentences, keywords=("a", "b"), status="Oral")


def test_every_chunk_carries_its_paper(tmp_path):
    prime_tiktoken(tmp_path)
    settings = ChunkingSettings(size=64, overlap=8)
    paper = long_paper()
    docs = chunk_paper(paper, make_splitter(settings))
    assert len(docs) > 5
    enc = tiktoken.get_encoding(settings.encoding)
    for n, doc in enumerate(docs):
        assert doc.id == f"Long000001:{n}"
        assert doc.metadata["paper_id"] == "Long000001" and doc.metadata["title"] == "Sparse Things"
        assert doc.metadata["chunk"] == n and doc.metadata["n_chunks"] == len(docs)
        assert doc.page_content.startswith("Sparse Things\n\n")
        assert len(enc.encode(body_of(doc))) <= 64
        assert doc.metadata["content_hash"] == paper.content_hash()
    assert "abstract" in docs[0].metadata and all("abstract" not in d.metadata for d in docs[1:])
    assert paper_from_metadata(docs[0].metadata) == dataclasses.replace(paper, url=paper.link)


def test_chunk_ids_are_stable(tmp_path):
    prime_tiktoken(tmp_path)
    settings = ChunkingSettings(size=64, overlap=8)
    first = chunk_papers([long_paper()], settings)
    second = chunk_papers([long_paper()], settings)
    assert [d.id for d in first] == [d.id for d in second]
    assert [d.page_content for d in first] == [d.page_content for d in second]


def test_short_abstract_is_one_chunk(tmp_path):
    prime_tiktoken(tmp_path)
    docs = chunk_papers([Paper(id="S", title="T", abstract="Short.")], ChunkingSettings())
    assert len(docs) == 1 and body_of(docs[0]) == "Short."
