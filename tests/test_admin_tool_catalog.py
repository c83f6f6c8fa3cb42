"""The tool catalog in the admin: every tool seen is listed; the operator marks retrieval."""

import pytest
from django.test import Client

from diagnosis.models import ToolCatalogEntry, ToolInvocation
from tests.otlp import export, new_span_id, new_trace_id, post, span

pytestmark = pytest.mark.django_db


def a_tool_span(name: str, result: str):  # type: ignore[no-untyped-def]
    trace_id = new_trace_id()
    return export(
        span(
            f"execute_tool {name}",
            trace_id=trace_id,
            parent=new_span_id(),
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.result": result,
            },
        )
    )


def test_a_tool_seen_in_a_trace_is_listed_and_marked_retrieval_by_the_operator(
    admin_client, make_client
):
    key = make_client("agent").raw_key
    post(Client(), a_tool_span("QueryInternalDocsTools", '["ERR-5021 runbook"]'), key=key)
    entry = ToolCatalogEntry.objects.get(tool_name="QueryInternalDocsTools")
    assert entry.kind == "other"

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/")
    assert "QueryInternalDocsTools" in page.content.decode()
    changed = admin_client.post(
        f"/admin/diagnosis/toolcatalogentry/{entry.pk}/change/",
        {
            "tool_name": entry.tool_name,
            "kind": "retrieval",
            "level_rule": "code",
            "code_pattern": r"ERR-\d{4}",
        },
    )
    assert changed.status_code == 302
    post(Client(), a_tool_span("QueryInternalDocsTools", '["ERR-5021 runbook"]'), key=key)

    latest = ToolInvocation.objects.order_by("-id").first()
    assert (latest.kind, latest.match_level) == ("retrieval", "L0")


def test_a_code_pattern_that_is_not_a_regular_expression_is_refused(admin_client):
    entry = ToolCatalogEntry.objects.create(tool_name="t")

    page = admin_client.post(
        f"/admin/diagnosis/toolcatalogentry/{entry.pk}/change/",
        {"tool_name": "t", "kind": "retrieval", "level_rule": "code", "code_pattern": "(["},
    )

    assert page.status_code == 200
    entry.refresh_from_db()
    assert entry.kind == "other"
