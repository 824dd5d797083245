"""PaperChat's exceptions. Every message says what to do next; entry points show it as one line."""


class PaperChatError(Exception):
    """Base class: an error the user can act on."""


class ConfigError(PaperChatError):
    """A setting is missing or wrong."""


class CorpusError(PaperChatError):
    """A corpus file cannot be read at all (missing, unreadable, wrong format)."""


class IndexError_(PaperChatError):
    """The vector store is unreachable or holds data that does not match the settings."""


class QuestionError(PaperChatError):
    """The question cannot be used as typed (empty, too long, no words)."""


class EmptyIndexError(PaperChatError):
    """Nothing has been ingested yet."""


class ModelError(PaperChatError):
    """The chat model or the embedder failed or is unreachable."""


class LocalModelError(ModelError):
    """The embedded model could not be assembled or started."""
