"""The session timeline on the session's admin page: its spans (OTLP) or its tool
invocations (REST) on one time scale, each expandable to its arguments and result, with
the cases its case-library searches found."""

from dataclasses import asdict

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString

from caselibrary.selectors import session_case_searches
from diagnosis.models import DiagnosisSession, SpanRole
from diagnosis.selectors import session_timeline


def timeline_html(session: DiagnosisSession) -> SafeString:
    found: dict[str, list[str]] = {}
    for search in session_case_searches(session_id=session.session_id):
        found.setdefault(search.invocation_id, []).extend(search.case_ids or [])
    labels = dict(SpanRole.choices)
    rows = []
    for row in session_timeline(session_id=session.session_id):
        item = asdict(row)
        item["role_label"] = labels.get(row.role, row.role)
        item["cases"] = [
            (case_id, reverse("admin:caselibrary_caselibrary_change", args=[case_id]))
            for case_id in found.get(row.invocation_id or "", [])
        ]
        rows.append(item)
    return render_to_string("admin/diagnosis/timeline.html", {"rows": rows})
