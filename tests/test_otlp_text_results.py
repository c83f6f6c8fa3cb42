"""POST /v1/traces: a retrieval tool that answers text rather than a JSON list (OpenAI
Agents SDK with OpenInference, `tool_span_kinds={"search_docs": "RETRIEVER"}`, a tool
returning "Doc 1: ERR-5041 ...") counts one document when the tool catalog's option "a text
result is one document" is on, so that the call reads L1 (or L0 by the exact-code rule)
with no change to the agent's code. A blank result, an empty JSON list and a failed call
count none; a JSON list is counted as ever; a span's diagnosis.hit_count wins."""

import json

import pytest
from django.db import connection

from diagnosis.models import (
    DiagnosisSession,
    LevelRule,
    ToolCatalogEntry,
    ToolInvocation,
    ToolKind,
)
from tests.otlp import agent_run, post
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

TEXT = "Doc 1: ERR-5041 连接池耗尽，扩容数据库连接池。\nDoc 2: runbook order-service 504"


def run_with_result(result: str, *, error: str | None = None, **attributes):  # type: ignore[no-untyped-def]
    """A RETRIEVER span of search_docs whose result is `result`, in an agent's run."""
    tool = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": '{"query": "order-service 504"}',
        "output.value": result,
        **attributes,
    }
    return agent_run("text-result-1", tool, error=error)


def catalog_entry(*, text_is_one_document: bool, **fields) -> ToolCatalogEntry:  # type: ignore[no-untyped-def]
    return ToolCatalogEntry.objects.create(
        tool_name="search_docs",
        kind=ToolKind.RETRIEVAL,
        text_is_one_document=text_is_one_document,
        **fields,
    )


def fact_and_score() -> tuple[int, str | None, int]:
    fact = ToolInvocation.objects.get()
    score = DiagnosisSession.objects.get().self_evaluation["evidence_score"]
    return fact.hit_count, fact.match_level, score


def test_a_text_result_counts_one_document_when_the_catalog_says_so(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(TEXT), key=key)

    # A successful call (+30) that hit at L1 (+20).
    assert fact_and_score() == (1, "L1", 50)


def test_a_text_result_counts_no_document_when_the_option_is_off(client, key):
    catalog_entry(text_is_one_document=False)

    post(client, run_with_result(TEXT), key=key)

    # A successful call (+30), a retrieval with no hit (-10).
    assert fact_and_score() == (0, "NONE", 20)


def test_the_option_is_off_for_a_tool_the_catalog_adds_from_a_trace(client, key):
    post(client, run_with_result(TEXT), key=key)

    assert ToolCatalogEntry.objects.get().text_is_one_document is False
    assert fact_and_score() == (0, "NONE", 20)


def test_an_empty_json_list_stays_no_document_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result("[]"), key=key)

    assert fact_and_score() == (0, "NONE", 20)


def test_a_json_list_is_counted_as_ever_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(json.dumps(["Doc 1: ERR-5041", "Doc 2", "Doc 3"])), key=key)

    assert fact_and_score() == (3, "L1", 50)


def test_a_list_under_a_usual_key_is_counted_as_ever_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(json.dumps({"documents": []})), key=key)

    assert fact_and_score() == (0, "NONE", 20)


def test_a_json_object_with_no_list_counts_one_document_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(json.dumps({"answer": TEXT}, ensure_ascii=False)), key=key)

    assert fact_and_score() == (1, "L1", 50)


@pytest.mark.parametrize("blank", [" ", "\n\t "])
def test_a_blank_result_counts_no_document_with_the_option_on(client, key, blank):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(blank), key=key)

    assert fact_and_score() == (0, "NONE", 20)


def test_a_failed_call_counts_no_document_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result("Traceback: search backend timed out", error="timeout"), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.status, fact.hit_count, fact.match_level) == ("FAILED", 0, None)


def test_the_span_s_hit_count_wins_over_the_option(client, key):
    catalog_entry(text_is_one_document=True)

    post(client, run_with_result(TEXT, **{"diagnosis.hit_count": 0}), key=key)

    assert fact_and_score() == (0, "NONE", 20)


def test_the_exact_code_rule_reads_l0_in_a_text_result_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True, level_rule=LevelRule.CODE)

    post(client, run_with_result(TEXT), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (1, "L0")


def test_the_exact_code_rule_reads_l1_when_no_code_is_found_with_the_option_on(client, key):
    catalog_entry(text_is_one_document=True, level_rule=LevelRule.CODE)

    post(client, run_with_result("Doc 1: 扩容数据库连接池"), key=key)

    assert fact_and_score() == (1, "L1", 50)


def test_a_catalog_row_written_by_sql_has_the_option_off() -> None:
    # By SQL, not the ORM: an ORM insert sends the field's Python default, and the
    # database's own default is what is tested.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO tool_catalog (tool_name, kind, level_rule, code_pattern, first_seen)"
            " VALUES (%s, %s, %s, %s, %s)",
            ["search_docs", "retrieval", "hits", "", "2026-01-01 00:00:00"],
        )

    assert ToolCatalogEntry.objects.get().text_is_one_document is False


# --- The option on the tool catalog's admin pages ----------------------------------------


def test_the_tool_catalog_list_shows_the_option_of_each_tool(admin_client, admin_in_english):
    ToolCatalogEntry.objects.create(tool_name="search_docs", text_is_one_document=True)
    ToolCatalogEntry.objects.create(tool_name="get_time")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/?o=1")

    text = page.content.decode()
    cells = text.split('<td class="field-text_document_column">')[1:]
    assert [cell.split("</td>")[0].count('alt="True"') for cell in cells] == [0, 1]
    assert "Text = 1 doc" in text


def test_the_tool_s_page_shows_the_option_and_saves_it(admin_client):
    tool = ToolCatalogEntry.objects.create(tool_name="search_docs", kind=ToolKind.RETRIEVAL)

    page = admin_client.get(f"/admin/diagnosis/toolcatalogentry/{tool.pk}/change/")

    assert 'name="text_is_one_document"' in page.content.decode()
    changed = admin_client.post(
        f"/admin/diagnosis/toolcatalogentry/{tool.pk}/change/",
        {
            "tool_name": "search_docs",
            "kind": "retrieval",
            "level_rule": "hits",
            "code_pattern": tool.code_pattern,
            "text_is_one_document": "on",
        },
    )
    assert changed.status_code == 302
    tool.refresh_from_db()
    assert tool.text_is_one_document is True


def test_the_tool_catalog_list_filters_by_the_option(admin_client):
    ToolCatalogEntry.objects.create(tool_name="search_docs", text_is_one_document=True)
    ToolCatalogEntry.objects.create(tool_name="get_time")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/?text_is_one_document__exact=1")

    text = page.content.decode()
    assert "search_docs" in text
    assert "get_time" not in text


def test_the_catalogs_delete_action_says_it_deletes_tools(admin_client):
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/").content.decode()

    assert '<option value="delete_selected">删除所选工具</option>' in page


def test_the_catalogs_delete_action_says_it_deletes_tools_in_english(
    admin_client, admin_in_english
):
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/").content.decode()

    assert '<option value="delete_selected">Delete selected tools</option>' in page
