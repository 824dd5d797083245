"""PaperChat: chat with the ICLR 2026 papers, every claim cited.

Stages, one module each: corpus -> chunking/embeddings/index -> retrieve -> answer (citations, prompts);
settings, llm/local_llm (the model seam), pipeline (wiring) and cli (entry point) around them.
"""
