"""Stage 5, answer: grounded, cited and checked answers; comparisons, reviews and counts."""
