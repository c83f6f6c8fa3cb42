"""The demo case library, and demo sessions whose searches find it (the loop, shown).

`cases.json` is a curated library an SRE team might have after a few months: alerts such as
high CPU, memory, disk, slow responses, 5xx, Pod CrashLoopBackOff / OOMKilled / Pending,
MySQL lock waits, Oracle ORA-01555, Kafka consumer lag, in Chinese and English.
`searches.json` are questions put to the agent, each searched in the library through the
service as the agent's tool would, so their sessions carry a CaseLibrarySearch fact, their
scores count the hits, and their feedback counts on the cases found.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from caselibrary.models import CaseLibrary, SourceType
from caselibrary.selectors import CasesFound
from caselibrary.services.index import case_index_build
from caselibrary.services.outcomes import case_outcomes_sweep
from caselibrary.services.search import case_search
from diagnosis.models import DiagnosisSession, InvocationStatus, ToolKind
from diagnosis.services import invocations_record, session_complete, session_start
from evaluation.services import opinions_enabled, session_evaluate, session_opinion_form
from feedback.demo.sessions import FEEDBACK_AFTER, SESSION_LENGTH, SESSION_STORY
from feedback.services import feedback_submit

HERE = Path(__file__).resolve().parent
CURATOR = "demo.curator"
# Case ids derived from the case's key: loading twice finds the same rows.
_NAMESPACE = uuid.UUID("6c2b1f0e-1d64-4c55-9d1f-3f6f0c1a7e52")


@dataclass(frozen=True)
class Loaded:
    cases: int
    session_ids: tuple[str, ...]  # the sessions that search the library, added

    @property
    def searches(self) -> int:
        return len(self.session_ids)


@cache
def demo_cases() -> tuple[dict, ...]:
    return tuple(json.loads((HERE / "cases.json").read_text(encoding="utf-8")))


@cache
def demo_searches() -> tuple[dict, ...]:
    return tuple(json.loads((HERE / "searches.json").read_text(encoding="utf-8")))


def demo_case_id(key: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, key))


def load_case_library(*, now: datetime | None = None) -> Loaded:
    """Add the demo cases and searches that are missing; build the search index."""
    now = now or timezone.now()
    cases = _load_cases(now)
    # Indexed before going on (here, or by a running worker's indexer, waited for): the
    # searches below must find the cases, and `make run` shows the loop at once.
    case_index_build()
    searches = _load_searches(now)
    if searches:
        case_index_build()  # with the cases their useful feedback made
        case_outcomes_sweep()  # the cases found learn how their sessions were rated
    return Loaded(cases=cases, session_ids=searches)


def feedback_cases_date(*, session_ids: list[str]) -> None:
    """Date the cases the sessions' `useful` made when it was given (their feedback_at).

    Before the index is built: the change each update records is indexed with the rest.
    """
    session = DiagnosisSession.objects.filter(session_id=OuterRef("diagnosis_id"))
    given = Subquery(session.values("feedback_at")[:1])
    CaseLibrary.objects.filter(
        diagnosis_id__in=session_ids, diagnosis__feedback_at__isnull=False
    ).update(created_at=given, updated_at=given)


def _load_cases(now: datetime) -> int:
    existing = set(
        CaseLibrary.objects.filter(
            case_id__in=[demo_case_id(c["key"]) for c in demo_cases()]
        ).values_list("case_id", flat=True)
    )
    rows = [
        CaseLibrary(
            case_id=demo_case_id(case["key"]),
            source_type=SourceType.MANUAL,
            fault_category=case["fault_category"],
            error_code=case["error_code"],
            title=case["title"],
            root_cause=case["root_cause"],
            solution=case["solution"],
            created_by=CURATOR,
            updated_by=CURATOR,
        )
        for case in demo_cases()
        if demo_case_id(case["key"]) not in existing
    ]
    CaseLibrary.objects.bulk_create(rows)
    # Curated over the past quarter, oldest first.
    for n, row in enumerate(rows):
        row.created_at = row.updated_at = now - timedelta(days=90 - n, hours=n % 9)
    CaseLibrary.objects.bulk_update(rows, ["created_at", "updated_at"], batch_size=500)
    return len(rows)


def _load_searches(now: datetime) -> tuple[str, ...]:
    """Add the searching sessions that are missing; their ids.

    Their tool calls, score and opinion keep the time they were recorded, for
    `feedback.demo.loader` to date once the library has learnt from them.
    """
    wanted = {s["session_id"]: s for s in demo_searches()}
    present = set(
        DiagnosisSession.objects.filter(session_id__in=wanted).values_list("session_id", flat=True)
    )
    loaded = []
    for n, (session_id, item) in enumerate(wanted.items()):
        if session_id in present:
            continue
        with transaction.atomic():
            session_start(session_id=session_id, query=item["query"], user_id=item["user_id"])
            found = case_search(query=item["query"], session_id=session_id, limit=3).found
            invocations_record(
                session_id=session_id,
                invocations=[
                    {
                        "invocation_id": "metrics-1",
                        "tool_name": "QueryMetricsTools",
                        "kind": ToolKind.OTHER.value,
                        "status": InvocationStatus.SUCCESS.value,
                        "query": item["query"][:200],
                        "duration_ms": 180 + 37 * n % 400,
                    }
                ],
            )
            session_complete(session_id=session_id, status="SUCCESS", answer=_answer(found))
        session_evaluate(session_id=session_id)
        if opinions_enabled():
            session_opinion_form(session_id=session_id)
        if item["feedback"]:
            feedback_submit(session_id=session_id, feedback=item["feedback"])
        started = min(
            now - timedelta(days=(len(wanted) - n) % 14, minutes=17 * n % 600),
            now - SESSION_STORY,
        )
        DiagnosisSession.objects.filter(session_id=session_id).update(
            created_at=started,
            finished_at=started + SESSION_LENGTH,
            feedback_at=started + SESSION_LENGTH + FEEDBACK_AFTER if item["feedback"] else None,
        )
        feedback_cases_date(session_ids=[session_id])
        loaded.append(session_id)
    return tuple(loaded)


def _answer(found: CasesFound) -> str:
    """What the agent answers: from the best case found, or its own reading of metrics."""
    if not found.matches:
        return (
            "没有找到相似的历史案例。根据指标，先确认影响范围和变更记录，再按组件逐一排查。\n"
            "No similar past incident was found; check the blast radius and recent changes first."
        )
    case = found.matches[0].case
    return f"参考历史案例「{case.title}」。\n根因：{case.root_cause}\n解决：\n{case.solution}"
