"""Corpus: paper records and reviews read, validated and (with `paperchat fetch`) downloaded."""
