"""Stage 3, the question: cleaned, routed, and rewritten into a standalone English query when needed."""
