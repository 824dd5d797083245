"""Retrieve: the top papers for a query (BM25 and vectors fused, grouped per paper, filtered)."""
