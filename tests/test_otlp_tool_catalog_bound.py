"""The tool catalog takes every tool name an agent reports, up to TOOL_CATALOG_MAX_NAMES
names: an agent that puts an id into its tool names (`search-7f3a…`) would otherwise fill
the page operators classify tools on. Past the bound a new name's calls are stored and
scored with the catalog's defaults, and the answer says the name was not added."""

import pytest

from diagnosis.models import ToolCatalogEntry, ToolInvocation
from tests.otlp import export, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db(transaction=True)


def run_with_tools(*names: str):  # type: ignore[no-untyped-def]
    trace = new_trace_id()
    root = span(
        "invoke_agent",
        trace_id=trace,
        attributes={"gen_ai.operation.name": "invoke_agent", "session.id": f"cat-{names[0]}"},
    )
    tools = [
        span(
            f"execute_tool {name}",
            trace_id=trace,
            parent=root.span_id,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
        )
        for name in names
    ]
    return export(root, *tools)


def test_a_full_catalog_takes_no_new_name_and_the_answer_says_so(client, key, settings) -> None:
    settings.TOOL_CATALOG_MAX_NAMES = 2
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    response = post(client, run_with_tools("get_time", "search-7f3a", "search-91bc"), key=key)

    assert response.status_code == 200
    named = set(ToolCatalogEntry.objects.values_list("tool_name", flat=True))
    assert len(named) == 2 and "search_docs" in named
    left_out = {"get_time", "search-7f3a", "search-91bc"} - named
    assert len(left_out) == 2
    # Every call is a fact all the same, with the catalog's default kind.
    assert ToolInvocation.objects.filter(tool_name__in=left_out, kind="other").count() == 2
    message = response_of(response).partial_success.error_message
    assert "工具目录已满" in message and all(name in message for name in left_out)


def test_a_name_the_catalog_holds_is_read_from_it_when_the_catalog_is_full(
    client, key, settings
) -> None:
    settings.TOOL_CATALOG_MAX_NAMES = 1
    ToolCatalogEntry.objects.create(tool_name="search_docs", kind="retrieval")

    response = post(client, run_with_tools("search_docs"), key=key)

    assert response.status_code == 200
    assert ToolInvocation.objects.get().kind == "retrieval"
    assert not response_of(response).partial_success.error_message


def test_below_the_bound_every_new_name_enters_the_catalog(client, key) -> None:
    response = post(client, run_with_tools("get_time", "search_docs"), key=key)

    assert response.status_code == 200
    assert ToolCatalogEntry.objects.count() == 2


@pytest.mark.usefixtures("admin_in_english")
def test_the_catalog_page_says_when_the_catalog_is_full(admin_client, settings) -> None:
    settings.TOOL_CATALOG_MAX_NAMES = 1
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/")

    text = " ".join(page.content.decode().split())
    assert "The tool catalog is full (1 tool names, TOOL_CATALOG_MAX_NAMES)" in text


@pytest.mark.usefixtures("admin_in_english")
def test_the_catalog_page_says_nothing_of_a_bound_it_has_not_reached(admin_client) -> None:
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    page = admin_client.get("/admin/diagnosis/toolcatalogentry/")

    assert "is full" not in page.content.decode()


def test_a_name_left_out_is_told_without_claiming_how_its_call_was_read(
    client, key, settings
) -> None:
    # The span's own hint may have set its kind: the note says what happened to the name.
    settings.TOOL_CATALOG_MAX_NAMES = 1
    ToolCatalogEntry.objects.create(tool_name="search_docs")

    response = post(client, run_with_tools("kb-7f3a"), key=key)

    message = response_of(response).partial_success.error_message
    assert "“kb-7f3a” 未加入工具目录（工具目录已满，1 个工具名）" in message
