"""OpenReview API v2 submission notes -> corpus records (title, abstract, keywords, venue -> status).

Used by `rag.corpus.papers` for notes exports; kept apart because it is the one place that knows
OpenReview's field names and venue wordings.
"""

from __future__ import annotations

import re

from rag.text import openreview_url

NOT_ACCEPTED = "Not accepted (rejected / desk-rejected / withdrawn after 2025-11-22)"
# `content` keys of a submission note -> corpus fields (first key present wins).
NOTE_FIELDS = (("title", "title"), ("abstract", "abstract"), ("keywords", "keywords"),
               ("primary_area", "primary_area"), ("TLDR", "tldr"), ("TL;DR", "tldr"), ("tldr", "tldr"))
_ACCEPTED_VENUE = re.compile(r"ICLR \d{4} (Oral|Poster)( \(conditional\))?", re.IGNORECASE)
_VENUEID_STATUS = {"Withdrawn_Submission": "Withdrawn", "Desk_Rejected_Submission": NOT_ACCEPTED,
                   "Rejected_Submission": NOT_ACCEPTED}


def is_note(obj: object) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("content"), dict)


def _value(field: object) -> object:
    """API v2 wraps every content field as {"value": ...}; v1 exports do not."""
    return field.get("value") if isinstance(field, dict) else field


def venue_status(venue: str, venueid: str = "") -> str | None:
    """The corpus status for an OpenReview venue (e.g. "ICLR 2026 Oral"), or None if it is no ICLR decision."""
    accepted = _ACCEPTED_VENUE.fullmatch(venue.strip())
    if accepted:
        return accepted.group(1).capitalize() + (" (conditional)" if accepted.group(2) else "")
    lowered = venue.lower()
    if "withdrawn" in lowered:
        return "Withdrawn"
    if lowered.startswith("submitted to") or "rejected" in lowered:  # after decisions, rejected papers keep this
        return NOT_ACCEPTED
    return _VENUEID_STATUS.get(venueid.rsplit("/", 1)[-1])


def note_to_record(note: dict) -> tuple[dict, list[str]]:
    """The corpus record of a submission note, and warnings; raises ValueError to skip it."""
    if note.get("replyto"):
        raise ValueError(f"a reply to {note['replyto']!r} (review or comment), not a submission")
    pid = note.get("forum") or note.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise ValueError("note has no 'id' or 'forum'")
    content = note["content"]
    record: dict = {"id": pid, "url": openreview_url(pid.strip())}
    for key, name in NOTE_FIELDS:
        if key in content and name not in record:
            record[name] = _value(content[key])
    venue, venueid = _value(content.get("venue")) or "", _value(content.get("venueid")) or ""
    if not isinstance(venue, str) or not isinstance(venueid, str):
        raise ValueError("content 'venue' and 'venueid' must be strings")
    warnings = []
    if venue or venueid:
        status = venue_status(venue, venueid)
        if status is None:
            status = venue
            warnings.append(f"venue {venue!r} is not an ICLR decision: kept as the status")
        record["status"] = status
    return record, warnings
