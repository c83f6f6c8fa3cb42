"""Prometheus metrics: what the service counts, and the `/metrics` scrape.

Counters are incremented where things happen (the functions below, called by services and
middleware); what is read at scrape time (whether the database and the cache answer, the
queue's depth and the age of its oldest waiting task, the apps' gauges) is in
config/metrics_scrape.py. Under gunicorn (several worker processes) and beside `qcluster`
workers, set PROMETHEUS_MULTIPROC_DIR to a directory every process of the machine shares
(emptied before the service starts): each process writes its samples there and the scrape
adds them up. The files of processes that ended are folded into one archive per type
(config/metrics_compaction.py), by the scrape and by process_ended, which
`config/gunicorn.conf.py` calls for a dead worker and manage.py as a process exits (its
files of zeros simply go: a command that recorded nothing leaves nothing); `manage.py
devserver` (what `make run` starts) empties VAR_DIR/prometheus and hands it to its web
server and worker.

Labels are bounded: the URL route's name (never the raw path), the HTTP method and status,
the session status, the feedback value, the case source, the match level.
"""

from __future__ import annotations

import contextlib
import glob
import ipaddress
import logging
import os
import secrets
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.registry import REGISTRY, Collector

from config import metrics_compaction
from config.failure_log import RepeatedFailures
from config.metrics_scrape import ReadAtScrape

logger = logging.getLogger(__name__)

# Before the first sample file is made: this process's claim on its pid, by which a
# compaction tells a process that ended (config/metrics_compaction.py); a forked child
# (a gunicorn or qcluster worker) claims its own before it writes.
metrics_compaction.claim_pid()
os.register_at_fork(after_in_child=metrics_compaction.claim_pid)

# No *_created series: the multi-process scrape has none, and one process's would double
# every counter's and histogram's series.
disable_created_metrics()

REQUESTS = Counter(
    "diagnosis_http_requests_total",
    "HTTP requests answered, by route, method and status.",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "diagnosis_http_request_duration_seconds",
    "Time to answer an HTTP request, by route and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
SESSIONS_COMPLETED = Counter(
    "diagnosis_sessions_completed_total", "Sessions completed, by final status.", ["status"]
)
# Scores are integers, so `le` at each band's top (diagnosis.selectors.SCORE_BAND_BOUNDS:
# 0, 1-39, 40-64, 65+) counts a band exactly: the dashboard's panel by band subtracts
# le="39.0" from le="64.0" for 40-64 (tests/test_evidence_score_buckets.py). 65 stays an
# edge: series already scraped name it.
EVIDENCE_SCORE_BUCKETS = (0, 10, 20, 30, 39, 50, 64, 65, 80, 100)
SCORES = Histogram(
    "diagnosis_evidence_score",
    "Evidence scores written by the rule engine (one per scoring, rescores included).",
    buckets=EVIDENCE_SCORE_BUCKETS,
)
SCORING_FAILURES = Counter(
    "diagnosis_scoring_failures_total", "Scoring tasks that failed (retried per the queue)."
)
FEEDBACK = Counter(
    "diagnosis_feedback_total", "Feedback that changed a session, by value.", ["value"]
)
CASES_CREATED = Counter("diagnosis_cases_created_total", "Cases created, by source.", ["source"])
CASE_SEARCHES = Counter(
    "diagnosis_case_searches_total",
    "Case-library searches, by the best hit's match level (L0, L1, NONE).",
    ["level"],
)


def request_observed(*, route: str, method: str, status: int, seconds: float) -> None:
    REQUESTS.labels(route, method, str(status)).inc()
    REQUEST_SECONDS.labels(route, method).observe(seconds)


def session_completed(status: str) -> None:
    SESSIONS_COMPLETED.labels(status).inc()


def score_written(score: int) -> None:
    SCORES.observe(score)


def scoring_failed() -> None:
    SCORING_FAILURES.inc()


def feedback_recorded(value: str) -> None:
    FEEDBACK.labels(value).inc()


def case_created(source: str) -> None:
    CASES_CREATED.labels(source).inc()


# --- The task queue: work that could not be put on it -----------------------------------
ENQUEUE_FAILURES = Counter(
    "diagnosis_enqueue_failures_total",
    "Tasks that could not be put on the queue after their transaction committed "
    "(the broker was unreachable); the work itself was kept.",
)


def enqueue_failed() -> None:
    ENQUEUE_FAILURES.inc()


# --- Case search: degraded searches and the query embedding's cost ---
CASE_SEARCHES_DEGRADED = Counter(
    "diagnosis_case_searches_degraded_total",
    "Case-library searches answered degraded: the embedding model or the search backend "
    "failed (the log says which).",
)
CASE_QUERY_EMBEDDING_SECONDS = Histogram(
    "diagnosis_case_query_embedding_seconds",
    "Time to embed a search's question (and rank the passages by it).",
    buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
)


def case_search(level: str, *, degraded: bool = False, embed_ms: float = 0.0) -> None:
    CASE_SEARCHES.labels(level).inc()
    if degraded:
        CASE_SEARCHES_DEGRADED.inc()
    else:
        CASE_QUERY_EMBEDDING_SECONDS.observe(embed_ms / 1000)


# --- The scrape: every process's samples, then what is read at scrape time ---------------


# How often a scrape lists the directory when a file went between the listing and its read
# (a process that ended removed its zeros: process_ended).
_READS = 5


class _EveryProcess(multiprocess.MultiProcessCollector):
    """Every process's samples, leaving out the files not sized yet, after folding the
    files of processes that ended into the archive (config/metrics_compaction.py); read
    under the directory's shared lock, so that no compaction runs during the read.

    prometheus_client creates a process's sample file empty and sizes it just after; a
    scrape in between (a worker starting, or recycled by the queue) failed as a whole on
    reading it, and a process killed in that moment left the empty file for good
    (prometheus/client_python#1199). Such a file holds no sample: it is skipped. A file
    that a process ending removes after the listing (its zeros, process_ended) failed
    the read as a whole too: the directory is listed again.
    """

    def collect(self) -> Iterator[Any]:
        _compact(self._path, wait_seconds=0.0)  # a scrape busy reading: the next one does
        with metrics_compaction.reading(self._path):
            for _again in range(_READS - 1):
                with contextlib.suppress(FileNotFoundError):
                    return self._merged()
            return self._merged()

    def _merged(self) -> Iterator[Any]:
        files = glob.glob(os.path.join(self._path, "*.db"))
        return self.merge([f for f in files if _sized(f)], accumulate=True)


_compaction_failures = RepeatedFailures()
COMPACTION_LOG_SECONDS = 600


def _compact(directory: str, *, wait_seconds: float) -> None:
    try:
        metrics_compaction.compact_ended(directory, wait_seconds=wait_seconds)
    except Exception as exc:  # the scrape answers all the same, reading the files as they are
        more = _compaction_failures.failed("compaction", every=COMPACTION_LOG_SECONDS)
        if more is not None:
            logger.warning(
                "metrics: the files of processes that ended could not be folded into the "
                "archive (%d more failures since the last line): %s",
                more,
                exc,
                exc_info=exc,
            )


def _sized(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except FileNotFoundError:  # a dead process's live gauges or zeros, removed since the glob
        return False


# --- A process's files when it ends ---------------------------------------------------


def process_ended(pid: int | None = None) -> None:
    """What this process leaves in the shared directory (multi-process mode) as it ends:
    its live gauges go (mark_process_dead, prometheus_client's bookkeeping for a process
    that dies), and so does each of its files that holds nothing but zeros. Every process
    that loads the service makes a counter and a histogram file (the metrics without
    labels are made at import), so each run of a command that records nothing (`check`,
    `create_api_key`, a cron'd `purge_sessions`) left two files, and each scrape reads
    every file. Removing zeros changes no total. A file holding a count is not simply
    removed (the machine's counters would go backwards, which prometheus_client's rules
    forbid): its counts are folded into the archive with those of every other process that
    ended (config/metrics_compaction.py), and then it goes. manage.py calls this as its
    process exits; gunicorn's master for each worker that exits (`pid`) and for itself (it
    loads the service to check it before the workers start)."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return
    pid = os.getpid() if pid is None else pid
    multiprocess.mark_process_dead(pid, directory)
    for path in glob.glob(os.path.join(directory, f"*_{pid}.db")):
        if _only_zeros(path):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
    if pid == os.getpid():
        metrics_compaction.release_claim()  # it records nothing more
    _compact(directory, wait_seconds=_ENDED_WAIT_SECONDS)


# How long a process that ends waits for the scrapes reading at that moment; past that the
# next scrape folds its files.
_ENDED_WAIT_SECONDS = 5.0


def _only_zeros(path: str) -> bool:
    try:
        if os.path.getsize(path) == 0:  # made, not sized yet: no sample
            return True
        return all(value == 0 for _, value, _, _ in MmapedDict.read_all_values_from_file(path))
    except FileNotFoundError:
        return False


class _ThisProcess(Collector):
    """The samples of this process (the default registry), when not in multi-process mode."""

    def collect(self) -> Iterator[Any]:
        yield from REGISTRY.collect()


def registry() -> CollectorRegistry:
    """What a scrape reads: every process's samples (multi-process mode) or this one's,
    then what is read at scrape time (config/metrics_scrape.py): the database, the cache,
    the queue's broker and the apps' SCRAPE_COLLECTORS."""
    scrape = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _EveryProcess(scrape)
    else:
        scrape.register(_ThisProcess())
    scrape.register(ReadAtScrape())
    return scrape


# --- The view -------------------------------------------------------------------------


SERVED_METHODS = ("GET", "HEAD")


def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics, for a bearer token (METRICS_BEARER_TOKEN) or an address in
    METRICS_ALLOWED_IPS; with neither set, loopback only. HEAD as GET; any other method
    405, whoever asks."""
    if request.method not in SERVED_METHODS:
        response = _json(405, "only GET and HEAD are served here")
        response["Allow"] = ", ".join(SERVED_METHODS)
        return response
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    started = time.monotonic()
    body = generate_latest(registry())
    logger.debug("metrics scraped", extra={"seconds": time.monotonic() - started})
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def _refusal(request: HttpRequest) -> HttpResponse | None:
    token = settings.METRICS_BEARER_TOKEN
    # The scheme in any case (RFC 7235: "bearer" is "Bearer"); the token exactly.
    scheme, space, credentials = request.headers.get("Authorization", "").partition(" ")
    if token and space and scheme.lower() == "bearer":
        if secrets.compare_digest(credentials.encode(), token.encode()):
            return None
        return _json(401, "invalid bearer token")
    if _address_allowed(request.META.get("REMOTE_ADDR", "")):
        return None
    if token:
        return _json(401, "send Authorization: Bearer <METRICS_BEARER_TOKEN>")
    return _json(403, "this address may not read the metrics (METRICS_ALLOWED_IPS)")


def _address_allowed(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in settings.METRICS_ALLOWED_NETWORKS)


_CODES = {401: "not_authenticated", 403: "permission_denied", 405: "method_not_allowed"}


def _json(status: int, message: str) -> JsonResponse:
    code = _CODES[status]
    response = JsonResponse({"code": code, "message": message}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response


def route_of(request: HttpRequest) -> str:
    """The resolved route's name (bounded), or "unmatched". A request answered before
    routing (the HTTPS redirect, the body limit, a refused Host) counts under the route
    its path asks for, so a 301 or a 413 shows against the endpoint it was meant for."""
    match: Any = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info, getattr(request, "urlconf", None))
        except Resolver404:
            return "unmatched"
    return match.view_name or match.route or "unnamed"


# The methods HTTP defines; any other a client names counts as "other", so that requests
# cannot add series without end (the route label is bounded the same way).
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"})


class MetricsMiddleware:
    """Counts every request by route, method and status, and times it; answers /metrics
    (before the Host check and the HTTPS redirect: Prometheus scrapes by address)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == "/metrics":
            return metrics_view(request)
        started = time.monotonic()
        response = self.get_response(request)
        request_observed(
            route=route_of(request),
            method=request.method if request.method in _METHODS else "other",
            status=response.status_code,
            seconds=time.monotonic() - started,
        )
        return response


# --- OTLP trace ingest ------------------------------------------------------------------

OTLP_SPANS = Counter(
    "diagnosis_otlp_spans_total",
    "Spans received on /v1/traces, by outcome (stored, duplicate, rejected).",
    ["outcome"],
)


def otlp_spans(*, accepted: int, duplicates: int, rejected: int) -> None:
    for outcome, count in (("stored", accepted), ("duplicate", duplicates), ("rejected", rejected)):
        if count:
            OTLP_SPANS.labels(outcome).inc(count)
