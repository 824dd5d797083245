"""Evaluation: retrieval and answer figures on labeled questions."""
