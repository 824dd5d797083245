"""Beside the trip, explore: similar papers and the topic map."""
