"""Huge texts in tool calls (an agent sent 96 KB queries, 30 batches of 36 calls): the
admin's pages cut each long query, error, argument and result to a readable excerpt that
says so and links to where the whole text is, so that a page stays a few megabytes at
most whatever the agent sent. The API hands the texts out whole (the contract)."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession, InvocationStatus, Span, ToolInvocation
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

SESSIONS = "/admin/diagnosis/diagnosissession/"
BAD_CASES = "/admin/feedback/badcase/"
INVOCATIONS = "/admin/diagnosis/toolinvocation/"

# An ASCII query of 96 KB, as the agent sent it (quotes and all: escaped on the page).
QUERY = ("SELECT id, note FROM orders WHERE note LIKE '%timeout%' AND shard = 7; " * 1400)[
    : 96 * 1024
]
ERROR = ("Traceback (most recent call last): <ConnectionError 'db-7:3306'> & retries\n" * 1300)[
    : 96 * 1024
]
BATCHES, PER_BATCH = 30, 36
MB = 1024 * 1024


def recorded(session: DiagnosisSession, **fields) -> None:  # type: ignore[no-untyped-def]
    """The session's calls, a batch at a time as the agent sent them."""
    for batch in range(BATCHES):
        ToolInvocation.objects.bulk_create(
            ToolInvocationFactory.build(
                session=session, invocation_id=f"b{batch:02d}-{n:02d}", query=QUERY, **fields
            )
            for n in range(PER_BATCH)
        )


@pytest.fixture
def huge() -> DiagnosisSession:
    session = DiagnosisSessionFactory(not_useful=True, session_id="huge-queries")
    recorded(session)
    return session


def test_the_session_page_of_a_thousand_96_kb_queries_stays_under_2_mb(admin_client, huge):
    response = admin_client.get(f"{SESSIONS}{huge.pk}/change/")

    assert response.status_code == 200
    assert len(response.content) < 2 * MB


def test_the_bad_case_page_of_the_same_session_stays_under_2_mb(admin_client, huge):
    response = admin_client.get(f"{BAD_CASES}{huge.pk}/change/")

    assert response.status_code == 200
    assert len(response.content) < 2 * MB


def test_a_page_of_the_invocation_list_stays_under_1_mb(admin_client, huge):
    for url in (INVOCATIONS, f"{INVOCATIONS}?session={huge.session_id}"):
        response = admin_client.get(url)

        assert response.status_code == 200
        assert response.content.decode().count("<tr") > 100
        assert len(response.content) < 1 * MB


def test_huge_error_messages_are_cut_on_the_session_page_too(admin_client):
    session = DiagnosisSessionFactory(failed=True, session_id="huge-errors")
    recorded(session, status=InvocationStatus.FAILED, match_level=None, error_message=ERROR)

    response = admin_client.get(f"{SESSIONS}{session.pk}/change/")

    assert response.status_code == 200
    assert len(response.content) < 3 * MB


def test_a_cut_query_ends_with_an_ellipsis_and_links_to_the_calls_own_page(admin_client):
    session = DiagnosisSessionFactory(succeeded=True, session_id="one-huge")
    call = ToolInvocationFactory(session=session, query=QUERY)

    page = admin_client.get(f"{SESSIONS}{session.pk}/change/").content.decode()

    own_page = f"{INVOCATIONS}{call.pk}/change/"
    assert "SELECT id, note FROM orders" in page
    assert "…" in page
    assert f'href="{own_page}"' in page
    assert "98,304 characters" in page
    assert QUERY not in page


def test_the_calls_own_page_shows_the_whole_query_once(admin_client):
    session = DiagnosisSessionFactory(succeeded=True, session_id="own-page")
    call = ToolInvocationFactory(session=session, query=QUERY, error_message="short")

    response = admin_client.get(f"{INVOCATIONS}{call.pk}/change/")

    assert response.status_code == 200
    page = response.content.decode()
    escaped = QUERY.replace("'", "&#x27;")
    assert page.count(escaped) == 1
    assert len(response.content) < len(escaped.encode()) + 200 * 1024


def test_the_list_cuts_the_tooltip_and_links_a_cut_text_to_the_calls_own_page(admin_client):
    session = DiagnosisSessionFactory(succeeded=True, session_id="listed-huge")
    call = ToolInvocationFactory(session=session, query=QUERY)

    page = admin_client.get(f"{INVOCATIONS}?session={session.session_id}").content.decode()

    assert QUERY.replace("'", "&#x27;") not in page
    assert f'href="{INVOCATIONS}{call.pk}/change/"' in page


def test_a_short_query_is_shown_whole_with_no_note(admin_client):
    session = DiagnosisSessionFactory(succeeded=True, session_id="short-one")
    ToolInvocationFactory(session=session, query="disk full on db-7")

    page = admin_client.get(f"{SESSIONS}{session.pk}/change/").content.decode()

    assert "disk full on db-7" in page
    assert "characters" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)


ARGUMENTS = ('{"question": "why is db-7 slow", "filters": ["shard=7"]} ' * 300)[:16_384]
RESULT = ("row " * 5000)[:16_384]


@pytest.fixture
def huge_spans() -> DiagnosisSession:
    """600 tool spans whose arguments and result are at the ingest's limit."""
    session = DiagnosisSession.objects.create(session_id="huge-spans", query="q")
    now = timezone.now()
    Span.objects.bulk_create(
        [
            Span(
                session=session,
                trace_id="0" * 31 + "1",
                span_id=f"{n:016x}",
                name="execute_tool search",
                role="tool",
                started_at=now + timedelta(milliseconds=n),
                ended_at=now + timedelta(milliseconds=n + 5),
                arguments=ARGUMENTS,
                result=RESULT,
                attributes={
                    "gen_ai.tool.call.arguments": ARGUMENTS,
                    "gen_ai.tool.call.result": RESULT,
                },
            )
            for n in range(1, 601)
        ],
        # 600 in one statement pass MariaDB's max_allowed_packet (16 MB).
        batch_size=100,
    )
    return session


def test_a_timeline_of_spans_with_long_arguments_and_results_stays_under_2_mb(
    admin_client, huge_spans
):
    response = admin_client.get(f"{SESSIONS}{huge_spans.pk}/change/")

    assert response.status_code == 200
    assert len(response.content) < 2 * MB


def test_a_cut_spans_attributes_show_its_arguments_and_result_whole(admin_client, huge_spans):
    span = Span.objects.filter(session=huge_spans).first()

    response = admin_client.get(f"{SESSIONS}{huge_spans.pk}/spans/{span.pk}/attributes/")

    page = response.content.decode()
    assert "the arguments above" not in page
    assert "the result above" not in page
    assert RESULT in page
