"""The list of one session's tool invocations says exactly how many there are and links to
its last page, as the session's page does, however many thousand calls the session made;
the list of every call, millions of rows, keeps its capped count."""

import re

import pytest

from config.admin_paginator import COUNT_CAP
from diagnosis.models import DiagnosisSession, InvocationStatus, ToolInvocation, ToolKind
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/diagnosis/toolinvocation/"
TOOL_CELL = re.compile(r'<td class="field-tool_name">([^<]*)</td>')
PAGE_LINK = re.compile(r'<a href="\?(?:[^"]*&amp;)?p=(\d+)[&"]')


def record_calls(session: DiagnosisSession, count: int, **fields) -> None:  # type: ignore[no-untyped-def]
    ToolInvocation.objects.bulk_create(
        ToolInvocationFactory.build(session=session, tool_name=f"Tool{n:04d}", **fields)
        for n in range(count)
    )


def linked_pages(response) -> set[int]:  # type: ignore[no-untyped-def]
    return {int(number) for number in PAGE_LINK.findall(response.content.decode())}


def test_a_session_with_more_calls_than_the_cap_says_exactly_how_many(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, COUNT_CAP + 5)

    response = admin_client.get(LIST, {"session": session.session_id})

    assert response.status_code == 200
    assert "1,005 tool invocations" in text(response)
    assert "1,000+" not in text(response)
    assert max(linked_pages(response)) == 11


def test_a_session_of_thousands_of_calls_links_to_its_last_page(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, 2 * COUNT_CAP + 5)

    first = admin_client.get(LIST, {"session": session.session_id})
    last = admin_client.get(LIST, {"session": session.session_id, "p": 21})

    assert "2,005 tool invocations" in text(first)
    assert max(linked_pages(first)) == 21
    assert TOOL_CELL.findall(last.content.decode()) == [f"Tool{n:04d}" for n in range(2000, 2005)]


def test_a_session_filtered_by_kind_and_status_too_is_counted_exactly(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, COUNT_CAP + 5, kind=ToolKind.OTHER, status=InvocationStatus.SUCCESS)
    record_calls(session, 7, kind=ToolKind.RETRIEVAL)

    response = admin_client.get(
        LIST,
        {"session": session.session_id, "kind": ToolKind.OTHER, "status": InvocationStatus.SUCCESS},
    )

    assert "1,005 tool invocations" in text(response)
    assert max(linked_pages(response)) == 11


def test_the_list_of_every_call_keeps_its_capped_count(admin_client) -> None:
    record_calls(DiagnosisSessionFactory(), COUNT_CAP)
    record_calls(DiagnosisSessionFactory(), 5)

    whole = admin_client.get(LIST)
    by_kind = admin_client.get(LIST, {"kind": ToolKind.RETRIEVAL})

    # Capped, or on MySQL/MariaDB the whole table's estimate from its statistics.
    assert re.search(r"(1,000\+|≈ [\d,]+) tool invocations", text(whole))
    assert "1,000+ tool invocations" in text(by_kind)


def test_a_page_of_a_session_of_thousands_of_calls_runs_a_handful_of_queries(
    admin_client, django_assert_max_num_queries
) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, COUNT_CAP + 5)

    # Django's session and user, the count, the page's keys, its rows with their sessions.
    with django_assert_max_num_queries(5):
        response = admin_client.get(LIST, {"session": session.session_id, "p": 11})

    assert len(TOOL_CELL.findall(response.content.decode())) == 5
