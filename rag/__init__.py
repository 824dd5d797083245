"""PaperChat: chat with the ICLR 2026 papers, every claim cited.

One subpackage per stage of the data's trip: corpus -> index -> question -> retrieve -> answer, with
explore beside it and models (the embedder and chat-model seam) under it; `pipeline` wires them and `cli`
and `ui` are the doors. See docs/ARCHITECTURE.md.

`from rag import PaperRetriever` gives the hybrid search as a LangChain retriever (imported on first use:
importing `rag` itself loads nothing heavy and has no side effects).
"""

__all__ = ["PaperRetriever", "Pipeline", "build_pipeline"]


def __getattr__(name: str):
    if name == "PaperRetriever":
        from rag.retrieve.retriever import PaperRetriever

        return PaperRetriever
    if name in ("Pipeline", "build_pipeline"):
        from rag import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'rag' has no attribute {name!r}")
