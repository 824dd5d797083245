"""Chunking: split each abstract into token-bounded chunks that carry their paper with them."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from rag.corpus.papers import Paper
from rag.retrieve.filters import keyword_key
from rag.settings import ChunkingSettings

KEYWORD_SEPARATOR = "; "  # Chroma metadata values are scalars, so keywords travel as one string


def make_splitter(settings: ChunkingSettings) -> RecursiveCharacterTextSplitter:
    """A sentence-aware splitter whose lengths are tiktoken tokens (primed offline, see rag.offline)."""
    return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=settings.encoding,
        chunk_size=settings.size,
        chunk_overlap=settings.overlap,
        separators=["\n\n", "\n", ". ", "; ", ", ", " ", ""],
        keep_separator="end",
    )


def chunk_text(title: str, body: str) -> str:
    """What is stored and embedded for one chunk: the title travels with every chunk."""
    return f"{title}\n\n{body}"


def body_of(document: Document) -> str:
    """The abstract text of a chunk, without the title prefix `chunk_text` added."""
    prefix = f"{document.metadata['title']}\n\n"
    text = document.page_content
    return text[len(prefix):] if text.startswith(prefix) else text


def paper_from_metadata(metadata: dict) -> Paper:
    """The paper record stored on a paper's first chunk."""
    keywords = metadata.get("keywords") or ""
    return Paper(
        id=metadata["paper_id"], title=metadata["title"], abstract=metadata.get("abstract", ""),
        keywords=tuple(k for k in keywords.split(KEYWORD_SEPARATOR) if k),
        primary_area=metadata.get("primary_area", ""), status=metadata.get("status", ""),
        url=metadata.get("url", ""), tldr=metadata.get("tldr", ""),
    )


def paper_metadata(paper: Paper) -> dict:
    metadata = {
        "paper_id": paper.id,
        "title": paper.title,
        "status": paper.status,
        "primary_area": paper.primary_area,
        "keywords": KEYWORD_SEPARATOR.join(paper.keywords),
        "url": paper.link,
        "tldr": paper.tldr,
        "content_hash": paper.content_hash(),
    }
    if paper.keywords:  # an array, so the keyword filter can use Chroma's $contains (no empty arrays allowed)
        metadata["keyword_list"] = sorted({keyword_key(k) for k in paper.keywords if k.strip()})
    return metadata


def chunk_paper(paper: Paper, splitter: RecursiveCharacterTextSplitter) -> list[Document]:
    """Chunks of one paper, with ids `<paper id>:<n>` that stay the same across re-ingests."""
    pieces = splitter.create_documents([paper.abstract])
    base = paper_metadata(paper)
    docs = []
    for n, piece in enumerate(pieces):
        metadata = dict(base, chunk=n, n_chunks=len(pieces))
        if n == 0:  # the whole abstract rides on the first chunk, for display and for the paper record
            metadata["abstract"] = paper.abstract
        docs.append(Document(id=f"{paper.id}:{n}", page_content=chunk_text(paper.title, piece.page_content),
                             metadata=metadata))
    return docs


def chunk_papers(papers: Iterable[Paper], settings: ChunkingSettings) -> list[Document]:
    splitter = make_splitter(settings)
    return [doc for paper in papers for doc in chunk_paper(paper, splitter)]

