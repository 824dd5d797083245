"""The app's log file, with every secret the settings hold masked before anything is written.

Entry points call `setup_logging(settings)`; library code only uses `logging.getLogger(__name__)`.
"""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Iterable

from rag.settings import Settings

MASK = "***"
MAX_LOG_BYTES = 5_000_000  # a log file rotates at this size; LOG_BACKUPS older files are kept
LOG_BACKUPS = 3


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


class RedactingFormatter(logging.Formatter):
    """Formats a record (traceback included), then masks the secrets; the record itself is left alone,
    so other handlers (the console, pytest's) see it unchanged."""

    def __init__(self, secrets: Iterable[str], fmt: str | None = None):
        super().__init__(fmt)
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


def setup_logging(settings: Settings, name: str = "app.log") -> logging.Handler:
    """INFO and up from every logger to `<data dir>/logs/<name>`, rotated at MAX_LOG_BYTES, secrets masked.
    Returns the handler (its `baseFilename` is the file)."""
    settings.logs_dir.mkdir(parents=True, exist_ok=True)
    path = settings.logs_dir / name
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS,
                                                   encoding="utf-8")
    handler.setFormatter(RedactingFormatter(settings.secrets(), "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for noisy in ("httpx", "httpcore", "urllib3", "chromadb.telemetry"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler
