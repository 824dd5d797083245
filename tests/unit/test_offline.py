import hashlib

from rag.offline import TIKTOKEN_FILES, prime_tiktoken


def test_tiktoken_is_primed_from_the_package(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    target = prime_tiktoken(tmp_path / "tk")
    for url, sha256 in TIKTOKEN_FILES.values():
        data = (target / hashlib.sha1(url.encode()).hexdigest()).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha256
    import tiktoken

    # The network guard is on: this would fail if tiktoken tried to download.
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.decode(enc.encode("positional embeddings")) == "positional embeddings"
