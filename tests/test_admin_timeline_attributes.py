"""The session timeline shows every attribute a span came with (read when its row is
opened), and a model call's model and tokens on its collapsed row; agents write these
strings, so all of it is escaped."""

import re

import pytest
from django.test import Client
from django.utils import timezone

from diagnosis.models import DiagnosisSession, Span
from tests.factories import ToolInvocationFactory
from tests.otlp import export, new_span_id, new_trace_id, post, span

pytestmark = pytest.mark.django_db

LIST = "/admin/diagnosis/diagnosissession/"


def page_of(admin_client, session_id: str) -> str:
    session = DiagnosisSession.objects.get(session_id=session_id)
    page = admin_client.get(f"{LIST}{session.pk}/change/").content.decode()
    return page[page.index('id="session-timeline"') :]


def attributes_of(admin_client, session_id: str) -> str:  # type: ignore[no-untyped-def]
    """The attribute tables of every row of the session's timeline, as its rows load them
    when opened."""
    timeline = page_of(admin_client, session_id)
    spans_url = re.search(r'data-spans-url="([^"]+)"', timeline).group(1)
    keys = re.findall(r'class="attributes-box" data-span="(\d+)"', timeline)
    assert keys
    return "".join(
        admin_client.get(f"{spans_url}{key}/attributes/").content.decode() for key in keys
    )


def a_session_with_a_model_call(key: str, **model_attributes) -> None:  # type: ignore[no-untyped-def]
    trace_id, root = new_trace_id(), new_span_id()
    post(
        Client(),
        export(
            span(
                "invoke_agent sre",
                trace_id=trace_id,
                span_id=root,
                duration_ms=100,
                attributes={"session.id": "attributes-1", "input.value": "为什么 504？"},
            ),
            span(
                "chat",
                trace_id=trace_id,
                parent=root,
                attributes={"gen_ai.operation.name": "chat", **model_attributes},
            ),
        ),
        key=key,
    )


def test_a_model_call_shows_its_model_and_tokens_on_its_collapsed_row(admin_client, make_client):
    a_session_with_a_model_call(
        make_client("agent").raw_key,
        **{
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 1234,
            "gen_ai.usage.output_tokens": 56,
        },
    )

    timeline = page_of(admin_client, "attributes-1")

    model_row = timeline[timeline.index('class="role-model') :]
    summary = model_row[: model_row.index("</summary>")]
    assert "gpt-4o" in summary
    assert "1234" in summary and "56" in summary


def test_the_expanded_row_lists_every_attribute_of_the_span(admin_client, make_client, settings):
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 100
    trace_id, root = new_trace_id(), new_span_id()
    behind_a_gateway = span(
        "GET /ask",
        trace_id=trace_id,
        span_id=root,
        parent=new_span_id(),
        attributes={"session.id": "attributes-2", "http.route": "/ask"},
    )
    behind_a_gateway.flags = 0x300
    tool = span(
        "execute_tool search_docs",
        trace_id=trace_id,
        parent=root,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_docs",
            "gen_ai.tool.call.result": "runbook " * 40,
            "diagnosis.hit_count": "lots",
        },
    )
    post(Client(), export(behind_a_gateway, tool), key=make_client("agent").raw_key)

    timeline = attributes_of(admin_client, "attributes-2")

    assert "http.route" in timeline
    assert "diagnosis.parent_is_remote" in timeline
    assert "diagnosis.hit_count" in timeline and "lots" in timeline
    assert "diagnosis.truncated" in timeline
    assert "gen_ai.tool.call.result" in timeline
    assert 'class="cut"' in timeline


def test_attribute_keys_and_values_are_escaped(admin_client, make_client):
    a_session_with_a_model_call(
        make_client("agent").raw_key,
        **{
            "gen_ai.request.model": "<b>gpt</b>",
            "<script>alert(1)</script>": '<img src=x onerror="alert(2)">',
        },
    )

    timeline = page_of(admin_client, "attributes-1") + attributes_of(admin_client, "attributes-1")

    assert "<script>alert(1)" not in timeline and "<img src=x" not in timeline
    assert "<b>gpt</b>" not in timeline
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in timeline
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in timeline
    assert "&lt;b&gt;gpt&lt;/b&gt;" in timeline


def test_a_long_attribute_value_is_folded_like_the_arguments(admin_client, make_client):
    a_session_with_a_model_call(
        make_client("agent").raw_key, **{"gen_ai.system_instructions": "be brief. " * 100}
    )

    timeline = attributes_of(admin_client, "attributes-1")

    assert '<pre class="value">be brief.' in timeline


def test_a_session_of_4000_spans_reads_its_timeline_in_a_few_queries(
    admin_client, django_assert_max_num_queries, admin_in_english
):
    session = DiagnosisSession.objects.create(session_id="big-1", query="q")
    now = timezone.now()
    trace = new_trace_id().hex()
    Span.objects.bulk_create(
        Span(
            session=session,
            trace_id=trace,
            span_id=f"{n:016x}",
            name="chat gpt-4o",
            role="model",
            started_at=now,
            ended_at=now,
            attributes={"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": n},
        )
        for n in range(1, 4002)
    )

    with django_assert_max_num_queries(16):
        response = admin_client.get(f"{LIST}{session.pk}/change/")

    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('class="attributes-box"') == 500
    # The timeline says it is cut short, and by how much.
    assert "The first 500 of 4001 are shown, in the order they started." in page


def test_a_timeline_that_fits_says_nothing_of_rows_left_out(admin_client):
    session = DiagnosisSession.objects.create(session_id="small-1", query="q")
    ToolInvocationFactory.create_batch(3, session=session)

    page = admin_client.get(f"{LIST}{session.pk}/change/").content.decode()

    assert "are shown, in the order they started" not in page


def test_a_spans_attributes_are_not_read_through_another_session(admin_client, make_client):
    a_session_with_a_model_call(make_client("agent").raw_key, **{"gen_ai.request.model": "m"})
    other = DiagnosisSession.objects.create(session_id="other-1", query="q")
    span_key = Span.objects.get(name="chat").pk

    response = admin_client.get(f"{LIST}{other.pk}/spans/{span_key}/attributes/")

    assert response.status_code == 404


def test_staff_who_may_not_read_sessions_cannot_read_a_spans_attributes(client, make_client):
    from django.contrib.auth.models import User

    a_session_with_a_model_call(make_client("agent").raw_key, **{"gen_ai.request.model": "m"})
    session = DiagnosisSession.objects.get(session_id="attributes-1")
    span_key = Span.objects.get(name="chat").pk
    client.force_login(User.objects.create_user("someone", is_staff=True))

    response = client.get(f"{LIST}{session.pk}/spans/{span_key}/attributes/")

    assert response.status_code == 403


def test_a_hint_the_ingest_ignored_is_marked_so_and_one_it_read_is_not(
    admin_client, make_client, settings
):
    settings.LANGUAGE_CODE = "en"
    trace_id, root = new_trace_id(), new_span_id()

    def tool(name: str, **hints) -> object:  # type: ignore[no-untyped-def]
        return span(
            f"execute_tool {name}",
            trace_id=trace_id,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **hints},
        )

    post(
        Client(),
        export(
            span("invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": "h-1"}),
            tool("kb", **{"diagnosis.tool.kind": " RETRIEVAL", "diagnosis.hit_count": "lots"}),
            tool(
                "docs",
                **{
                    "diagnosis.tool.kind": "retrieval",
                    "diagnosis.hit_count": "007",
                    "diagnosis.match_level": "l0",
                },
            ),
        ),
        key=make_client("agent").raw_key,
    )

    tables = attributes_of(admin_client, "h-1")

    assert tables.count('class="ignored"') == 1
    ignored = tables[: tables.index('class="ignored"')]
    assert ignored[ignored.rindex("<tr>") :].count("diagnosis.hit_count") == 1
    assert "ignored: the fact holds 0" in tables
