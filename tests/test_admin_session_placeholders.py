"""A trace whose spans named no session yet is kept under its trace id (a placeholder,
diagnosis/otlp_placeholders.py): the sessions list says it waits for its session id,
rather than showing it as an ordinary session waiting for its score."""

import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.otlp import export, new_span_id, new_trace_id, post, span

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]
WAITING = "waiting for the session id"
PENDING = ">pending<"

LIST = "/admin/diagnosis/diagnosissession/"


def spans_naming_no_session(key: str) -> str:
    """A tool span of a run whose agent span has not arrived: stored under the trace id."""
    trace_id = new_trace_id()
    post(
        Client(),
        export(
            span(
                "execute_tool search_docs",
                trace_id=trace_id,
                parent=new_span_id(),
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "kb"},
            )
        ),
        key=key,
    )
    return trace_id.hex()


def row_of(page: str, session_id: str) -> str:
    row = page[page.index(f">{session_id}<") :]
    return row[: row.index("</tr>")]


def test_a_placeholder_is_shown_waiting_for_its_session_id(admin_client, make_client):
    placeholder = spans_naming_no_session(make_client("agent").raw_key)
    assert DiagnosisSession.objects.get(session_id=placeholder).status == "RUNNING"

    page = admin_client.get(LIST).content.decode()

    row = row_of(page, placeholder)
    assert WAITING in row
    assert PENDING not in row


def test_a_running_session_started_with_a_hex_id_is_pending_as_before(admin_client):
    started_over_rest = DiagnosisSessionFactory(session_id=uuid.uuid4().hex)

    page = admin_client.get(LIST).content.decode()

    row = row_of(page, started_over_rest.session_id)
    assert PENDING in row
    assert WAITING not in row


def test_placeholders_cost_the_list_no_query_a_row(
    admin_client, make_client, django_assert_max_num_queries
):
    key = make_client("agent").raw_key
    spans_naming_no_session(key)
    with CaptureQueriesContext(connection) as one:
        admin_client.get(LIST)
    queries_with_one = len(one.captured_queries)
    for _ in range(4):
        spans_naming_no_session(key)

    with django_assert_max_num_queries(queries_with_one):
        page = admin_client.get(LIST).content.decode()

    assert page.count(WAITING) == 5


def test_a_placeholders_page_says_it_waits_for_its_session_id(admin_client, make_client):
    placeholder = DiagnosisSession.objects.get(
        session_id=spans_naming_no_session(make_client("agent").raw_key)
    )

    page = admin_client.get(f"{LIST}{placeholder.pk}/change/").content.decode()

    assert WAITING in page
