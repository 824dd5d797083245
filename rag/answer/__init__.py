"""Answer: grounded, cited and checked answers; comparisons, reviews and counts."""
