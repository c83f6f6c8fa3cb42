"""What /readyz and /metrics say of the search index's backlog: the cases waiting for the
indexer (case_change), whatever queued them, and with CASE_SEARCH_BACKEND=milvus whether
the collection is being refilled.

With Milvus the collection holds only what the indexer wrote: a case waiting is missing
from it (or stale), so searches answer from what is back so far. A collection found lost
(base.collection_lost) queues every case; until the indexer has written them back,
/readyz says `"search_index": "N cases waiting to be indexed"`, and stays
ready: searches answer, perhaps without some cases, and a readiness that failed would
take every web node out of the load balancer for the minutes of the refill. With the
database backend a waiting case is searched as it was before its change, and /readyz
says nothing of it; `diagnosis_case_index_waiting_cases` counts them for both.

Registered by register(), which the app's ready() runs: one query (a count of
case_change, bounded: cases_waiting), two past EXACT_UP_TO, per probe and per scrape,
read within PROBE_DB_DEADLINE_SECONDS with the database's other checks.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Max, Min
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

WAITING_GAUGE = "diagnosis_case_index_waiting_cases"


# Past this many cases waiting, the count is read from the change sequence: a count of
# the distinct cases reads every waiting change (MariaDB, 20,000 waiting: 23 ms a scrape
# and a probe, growing with the backlog; 1,000 of them: 1.2 ms, stopping there).
EXACT_UP_TO = 1_000


def cases_waiting() -> int:
    """The cases marked changed and not indexed yet: exact up to EXACT_UP_TO; past it, the
    changes between the first and the last waiting one (a refill marks the library once,
    in one run of the sequence: exact; otherwise an upper bound, a case marked twice
    counted twice)."""
    from caselibrary.models import CaseChange

    waiting = CaseChange.objects.values("case_id").distinct()[: EXACT_UP_TO + 1].count()
    if waiting <= EXACT_UP_TO:
        return waiting
    sequence = CaseChange.objects.aggregate(first=Min("seq"), last=Max("seq"))
    return sequence["last"] - sequence["first"] + 1


def search_index_check() -> str | None:
    """/readyz's `search_index` with Milvus: "ok", how many cases wait (a refill's), or
    "unavailable: ..." and why when the backend's last call failed; None (left out) with
    the database backend."""
    if settings.CASE_SEARCH_BACKEND != "milvus":
        return None
    # What this process knows without a call to the server: whether the client is
    # installed, and whether the backend's last call failed (searches answer degraded).
    if importlib.util.find_spec("pymilvus") is None:
        return "unavailable: the Milvus client is not installed: pip install '.[milvus]'"
    from caselibrary.search_backends.milvus import backend_failure

    failure = backend_failure()
    if failure:
        return f"unavailable: {failure}"
    waiting = cases_waiting()
    if not waiting:
        return "ok"
    # Any change waits a second or so; a refill waits as long as the library takes.
    return f"{waiting} cases waiting to be indexed"


class WaitingCasesCollector(Collector):
    """`diagnosis_case_index_waiting_cases`, read at each scrape (left out when the
    database cannot be read: `diagnosis_database_up` says so then)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            waiting = cases_waiting()
        except DatabaseError:
            return
        yield GaugeMetricFamily(
            WAITING_GAUGE,
            "Cases waiting for the indexer (after a Milvus collection was found lost: the "
            "whole library, refilled from the stored vectors).",
            value=waiting,
        )


def register() -> None:
    """Adds the readiness line and the gauge to every probe and scrape of this process."""
    from config.health import REPORTED_CHECKS
    from config.metrics_scrape import SCRAPE_COLLECTORS

    REPORTED_CHECKS["search_index"] = search_index_check
    if not any(isinstance(c, WaitingCasesCollector) for c in SCRAPE_COLLECTORS):
        SCRAPE_COLLECTORS.append(WaitingCasesCollector())
