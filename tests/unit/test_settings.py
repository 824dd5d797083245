from pathlib import Path

import pytest

from rag.errors import ConfigError
from rag.settings import SEED_CORPUS, SHIPPED_CORPUS, Settings, load_settings


def test_defaults_are_the_offline_embedded_setup(tmp_path):
    s = Settings()
    assert s.llm.backend == "embedded"
    assert s.embedding.backend == "minilm"
    assert s.chroma.mode == "embedded"
    assert s.ui.host == "127.0.0.1"
    assert s.corpus == [SEED_CORPUS] and SEED_CORPUS.is_file()  # the tests' corpus (tests/conftest.py)
    assert Settings.model_fields["corpus"].default_factory() == [SHIPPED_CORPUS] and SHIPPED_CORPUS.is_file()
    assert s.data_dir == tmp_path / "data"  # from the autouse fixture's PAPERCHAT_DATA_DIR
    assert s.chroma_dir.parent == s.data_dir and s.models_dir.parent == s.data_dir


def test_nested_env_overrides(monkeypatch):
    monkeypatch.setenv("PAPERCHAT_LLM__BACKEND", "openai")
    monkeypatch.setenv("PAPERCHAT_LLM__BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("PAPERCHAT_RETRIEVAL__K", "7")
    s = load_settings(env_file=None)
    assert s.llm.backend == "openai" and s.retrieval.k == 7
    assert s.llm.resolved_api_key() == "not-needed"  # local OpenAI-compatible servers need no key


def test_dotenv_file_is_read_by_entry_points(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text("PAPERCHAT_CHUNKING__SIZE=128\n")
    monkeypatch.delenv("PAPERCHAT_CHUNKING__SIZE", raising=False)
    assert load_settings(env_file=env).chunking.size == 128
    monkeypatch.delenv("PAPERCHAT_CHUNKING__SIZE")


def test_missing_openai_key_says_how_to_fix(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s = Settings(llm={"backend": "openai"})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        s.llm.resolved_api_key()


def test_key_from_environment_is_used(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert Settings(llm={"backend": "openai"}).llm.resolved_api_key() == "sk-test"


def test_unknown_paperchat_variable_is_an_error(monkeypatch):
    monkeypatch.setenv("PAPERCHAT_RETREIVAL__K", "3")
    with pytest.raises(ConfigError, match="PAPERCHAT_RETREIVAL__K"):
        load_settings(env_file=None)


def test_invalid_values_are_rejected(monkeypatch):
    monkeypatch.setenv("PAPERCHAT_LLM__BACKEND", "ollama")
    with pytest.raises(ConfigError, match="backend"):
        load_settings(env_file=None)
    monkeypatch.setenv("PAPERCHAT_LLM__BACKEND", "embedded")
    monkeypatch.setenv("PAPERCHAT_CHUNKING__SIZE", "64")
    monkeypatch.setenv("PAPERCHAT_CHUNKING__OVERLAP", "64")
    with pytest.raises(ConfigError, match="OVERLAP"):
        load_settings(env_file=None)


def test_env_example_documents_every_setting():
    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    from rag.settings import known_env_names

    missing = [name for name in known_env_names() if name not in example and "__" in name]
    assert not missing, f".env.example lacks {missing}"


def test_the_corpus_setting_takes_one_path_a_comma_list_or_json(monkeypatch):
    for value, expected in [("corpus/iclr2026_seed.jsonl", ["corpus/iclr2026_seed.jsonl"]),
                            ("a.jsonl, b.csv", ["a.jsonl", "b.csv"]), ('["a.jsonl", "b.csv"]', ["a.jsonl", "b.csv"])]:
        monkeypatch.setenv("PAPERCHAT_CORPUS", value)
        assert [str(p) for p in Settings().corpus] == expected
