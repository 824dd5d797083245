"""The question: cleaned, routed, and rewritten into a standalone English query when needed."""
