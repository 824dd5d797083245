"""Index: chunks, their vectors in Chroma and their BM25 twin, named by what made them."""
