"""Reads of sessions and their facts, shaped for the API and the admin."""

from datetime import datetime

from django.db.models import F, QuerySet

from diagnosis.models import DiagnosisSession, ToolInvocation
from diagnosis.services import SessionNotFound


def _with_case_id(queryset: QuerySet[DiagnosisSession]) -> QuerySet[DiagnosisSession]:
    # One LEFT JOIN instead of a query per session for its case.
    return queryset.annotate(linked_case_id=F("case__case_id"))


def session_get(*, session_id: str) -> DiagnosisSession:
    try:
        return _with_case_id(DiagnosisSession.objects.all()).get(session_id=session_id)
    except DiagnosisSession.DoesNotExist:
        raise SessionNotFound(session_id) from None


def session_invocations(*, session_id: str) -> QuerySet[ToolInvocation]:
    return ToolInvocation.objects.filter(session_id=session_id).order_by("id")


def session_list(
    *,
    status: str | None = None,
    feedback: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
) -> QuerySet[DiagnosisSession]:
    """Sessions, filtered; `feedback="none"` means no feedback given yet."""
    queryset = DiagnosisSession.objects.all()
    if status:
        queryset = queryset.filter(status=status)
    if feedback == "none":
        queryset = queryset.filter(feedback__isnull=True)
    elif feedback:
        queryset = queryset.filter(feedback=feedback)
    if created_after:
        queryset = queryset.filter(created_at__gte=created_after)
    if created_before:
        queryset = queryset.filter(created_at__lt=created_before)
    return _with_case_id(queryset)
