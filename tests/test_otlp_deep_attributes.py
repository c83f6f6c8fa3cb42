"""Span attributes nested deeper than MariaDB takes JSON (32 levels): the part past the
depth the mapping keeps is stored as its JSON text, so the span is stored alike on every
database, and a value the database refuses is never taken for an outage."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.db.models import TextField, Value
from django.test import Client
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList

from config.middleware import outage_kind
from diagnosis.models import DiagnosisSession, Span
from diagnosis.otlp_mapping import MAX_JSON_DEPTH
from diagnosis.otlp_races import lost_a_race
from tests.factories import DiagnosisSessionFactory
from tests.otlp import JSON, PROTOBUF, export, new_span_id, new_trace_id, otlp_json, post, span

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(make_client) -> str:  # type: ignore[no-untyped-def]
    return make_client("agent").raw_key


def nested_value(levels: int, *, kvlists: bool = False) -> AnyValue:
    """An arrayValue nesting `levels` deep; with `kvlists`, every second level a
    kvlistValue (each takes one more message level: protobuf decodes 100, so ~30 such)."""
    value = AnyValue(string_value="bottom")
    for level in range(levels, 0, -1):
        if level % 2 or not kvlists:
            value = AnyValue(array_value=ArrayValue(values=[value, AnyValue(int_value=level)]))
        else:
            value = AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="in", value=value)]))
    return value


def nested_json(levels: int, *, kvlists: bool = False, first: int = 1) -> Any:
    """What nested_value(levels) is as JSON, from its level `first` down."""
    value: Any = "bottom"
    for level in range(levels, first - 1, -1):
        value = [value, level] if level % 2 or not kvlists else {"in": value}
    return value


def json_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((json_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((json_depth(item) for item in value.values()), default=0)
    return 0


def unfolded(value: Any) -> Any:
    """`value` with any JSON text in it parsed back."""
    if isinstance(value, list):
        return [unfolded(item) for item in value]
    if isinstance(value, dict):
        return {name: unfolded(item) for name, item in value.items()}
    if isinstance(value, str) and value[:1] in ("[", "{"):
        return unfolded(json.loads(value))
    return value


def deep_batch(levels: int, trace_id: bytes, session_id: str, *, kvlists: bool = False) -> Any:
    root = new_span_id()
    deep = span("chat", trace_id=trace_id, parent=root)
    deep.attributes.add(key="deep", value=nested_value(levels, kvlists=kvlists))
    agent = span(
        "invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": session_id}
    )
    return export(agent, deep)


def body_of(request: Any, content_type: str) -> Any:
    return json.dumps(otlp_json(request)).encode() if content_type == JSON else request


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON], ids=["protobuf", "json"])
def test_a_span_whose_attribute_nests_40_levels_is_stored_with_the_deep_part_as_text(
    key, content_type
) -> None:
    trace_id = new_trace_id()
    request = deep_batch(40, trace_id, "deep-40")

    response = post(Client(), body_of(request, content_type), key=key, content_type=content_type)

    assert response.status_code == 200, response.content
    session = DiagnosisSession.objects.get(session_id="deep-40")
    assert session.status == "SUCCESS"
    assert Span.objects.filter(session=session).count() == 2
    stored = Span.objects.get(session=session, name="chat").attributes
    assert json_depth(stored) == MAX_JSON_DEPTH <= 16  # the attributes object: level 1
    assert unfolded(stored["deep"]) == nested_json(40)
    assert "diagnosis.truncated" not in stored


@pytest.mark.parametrize(
    ("levels", "kvlists"), [(40, False), (30, True)], ids=["arrays", "arrays-and-kvlists"]
)
def test_the_text_of_a_deep_value_starts_where_the_depth_is_cut(key, levels, kvlists) -> None:
    request = deep_batch(levels, new_trace_id(), "deep-cut", kvlists=kvlists)

    assert post(Client(), request, key=key).status_code == 200

    value = Span.objects.get(session_id="deep-cut", name="chat").attributes["deep"]
    containers = 0
    while not isinstance(value, str):
        containers += 1
        value = value[0] if isinstance(value, list) else value["in"]
    assert containers == MAX_JSON_DEPTH - 1
    assert json.loads(value) == nested_json(levels, kvlists=kvlists, first=MAX_JSON_DEPTH)


@pytest.mark.parametrize(
    ("levels", "kvlists"),
    [(10, False), (10, True), (MAX_JSON_DEPTH - 1, True)],
    ids=["10-arrays", "10-arrays-and-kvlists", "the-deepest-kept"],
)
def test_a_value_nested_within_the_depth_is_stored_as_nested_json_as_before(
    key, levels, kvlists
) -> None:
    request = deep_batch(levels, new_trace_id(), "deep-ok", kvlists=kvlists)

    response = post(Client(), request, key=key)

    assert response.status_code == 200, response.content
    stored = Span.objects.get(session_id="deep-ok", name="chat").attributes
    assert stored["deep"] == nested_json(levels, kvlists=kvlists)


# --- A value the database refuses is about the data: not a lost race, not an outage -------


def _span_row() -> Span:
    session = DiagnosisSessionFactory(session_id="refused")
    now = datetime.now(tz=UTC)
    return Span.objects.create(
        session=session,
        trace_id="ab" * 16,
        span_id="cd" * 8,
        name="chat",
        role="model",
        started_at=now,
        ended_at=now,
    )


def _refused(write) -> IntegrityError:  # type: ignore[no-untyped-def]
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        write()
    return refused.value


def test_a_span_stored_twice_is_a_lost_race_the_exporter_may_retry() -> None:
    row = _span_row()
    row.pk = None

    error = _refused(lambda: row.save(force_insert=True))

    assert lost_a_race(error)


def test_a_value_the_json_check_refuses_is_neither_a_lost_race_nor_an_outage() -> None:
    row = _span_row()
    # Text that is no JSON, written as it is (not encoded as a JSON string).
    not_json = Value("{", output_field=TextField())

    error = _refused(lambda: Span.objects.filter(pk=row.pk).update(attributes=not_json))

    assert not lost_a_race(error)
    assert outage_kind(error) is None


@pytest.mark.mysql
def test_json_nested_past_mariadbs_limit_is_neither_a_lost_race_nor_an_outage() -> None:
    row = _span_row()

    error = _refused(lambda: Span.objects.filter(pk=row.pk).update(attributes=nested_json(40)))

    assert error.args[0] == 4025  # CONSTRAINT otlp_span.attributes failed
    assert not lost_a_race(error)
    assert outage_kind(error) is None


def test_a_transaction_rolled_back_for_a_deadlock_is_a_race_retried() -> None:
    from django.db import OperationalError

    deadlock = "Deadlock found when trying to get lock; try restarting transaction"
    assert lost_a_race(OperationalError(1213, deadlock))


def test_a_lock_waited_for_in_vain_is_no_race_to_wait_for_again() -> None:
    # Each attempt would wait DB_LOCK_WAIT_TIMEOUT again (test_database_lock_waits).
    from django.db import OperationalError

    waited = OperationalError(1205, "Lock wait timeout exceeded; try restarting transaction")
    assert not lost_a_race(waited)
    assert outage_kind(waited) == "database"


def test_a_database_gone_is_no_race_to_retry_at_once() -> None:
    from django.db import OperationalError

    assert not lost_a_race(OperationalError(2003, "Can't connect to MySQL server"))
