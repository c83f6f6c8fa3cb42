"""Races /v1/traces loses to requests writing the same traces at the same time: retried a
few times, a few tens of milliseconds apart; one lost at every attempt is answered 503
with Retry-After (the exporter sends the batch again) and logged as the race it is, a
WARNING, not as the database's outage."""

import itertools
import logging
import time
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection
from django.test import Client
from google.rpc.status_pb2 import Status

from diagnosis.models import DiagnosisSession, Span
from diagnosis.otlp_races import RACE_ATTEMPTS, RaceLost, lost_a_race, race_named, retried
from tests.otlp import export, new_trace_id, post, span

DEADLOCK = (1213, "Deadlock found when trying to get lock; try restarting transaction")


class Losing:
    """Work that loses a deadlock `losses` times, then is done."""

    def __init__(self, losses: int, error: Exception | None = None) -> None:
        self.losses = losses
        self.error = error or OperationalError(*DEADLOCK)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.losses:
            raise self.error
        return "done"


@pytest.fixture
def pauses(monkeypatch) -> list[float]:  # type: ignore[no-untyped-def]
    """The pauses asked for between attempts, in seconds (none taken)."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def test_a_race_lost_four_times_is_won_at_the_fifth_attempt(pauses) -> None:
    work = Losing(4)

    assert retried(work) == "done"

    assert RACE_ATTEMPTS == 5
    assert work.calls == 5
    assert len(pauses) == 4


def test_the_pauses_between_attempts_grow_from_tens_of_milliseconds(pauses) -> None:
    for _ in range(50):
        pauses.clear()
        retried(Losing(4))

        assert 0.01 <= pauses[0] <= 0.02
        assert all(0.01 <= pause <= 0.2 for pause in pauses)
        # Each drawn from an interval twice the last's: they grow, if not always by double.
        assert all(later >= earlier for earlier, later in itertools.pairwise(pauses))


def test_the_pauses_are_drawn_so_that_two_losers_do_not_meet_again(pauses) -> None:
    firsts = set()
    for _ in range(20):
        pauses.clear()
        retried(Losing(1))
        firsts.add(pauses[0])

    assert len(firsts) > 1


def test_a_race_lost_at_every_attempt_raises_it_after_the_last(pauses) -> None:
    work = Losing(RACE_ATTEMPTS)

    with pytest.raises(OperationalError) as lost:
        retried(work)

    assert lost.value.args == DEADLOCK
    assert work.calls == RACE_ATTEMPTS
    assert len(pauses) == RACE_ATTEMPTS - 1


def test_a_session_moved_by_another_request_meanwhile_is_a_race_retried(pauses) -> None:
    moved = RaceLost("session 'abc' moved by a request committing at the same time")
    work = Losing(2, moved)

    assert retried(work) == "done"

    assert work.calls == 3
    assert lost_a_race(moved)
    assert race_named(moved) == "session 'abc' moved by a request committing at the same time"


def test_an_error_that_is_no_race_is_raised_at_once(pauses) -> None:
    work = Losing(1, OperationalError(2003, "Can't connect to MySQL server"))

    with pytest.raises(OperationalError):
        retried(work)

    assert work.calls == 1
    assert pauses == []


# --- Lost at every attempt, through the view ----------------------------------------------


@pytest.fixture
def every_span_stored_twice() -> Iterator[None]:
    """A database trigger that stores every span a second time as it is stored, as a
    request storing the same span at the same time would: the unique key refuses it (a
    real IntegrityError of the driver, at every attempt)."""
    with connection.cursor() as cursor:
        if connection.vendor == "mysql":
            cursor.execute(
                "CREATE TRIGGER stored_twice BEFORE INSERT ON otlp_span FOR EACH ROW "
                "SIGNAL SQLSTATE '23000' SET MYSQL_ERRNO = 1062, "
                "MESSAGE_TEXT = 'Duplicate entry for key uniq_span_per_trace'"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER stored_twice AFTER INSERT ON otlp_span "
                "BEGIN INSERT INTO otlp_span SELECT * FROM otlp_span WHERE id = NEW.id; END"
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER stored_twice")


# transaction=True: on MySQL/MariaDB, CREATE TRIGGER commits the transaction it is in.
@pytest.mark.django_db(transaction=True)
def test_spans_that_lose_every_race_get_503_retry_after_and_one_warning_naming_the_race(
    make_client, every_span_stored_twice, pauses, caplog
) -> None:
    key = make_client("agent").raw_key
    run = export(span("agent", trace_id=new_trace_id(), attributes={"session.id": "lost-1"}))

    with caplog.at_level(logging.INFO):
        response = post(Client(), run, key=key)

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    status = Status.FromString(response.content)
    assert (status.code, status.message) == (14, "服务暂不可用，请稍后重试")  # UNAVAILABLE
    assert len(pauses) == RACE_ATTEMPTS - 1
    assert not (DiagnosisSession.objects.exists() or Span.objects.exists())
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert f"lost a race at each of its {RACE_ATTEMPTS} attempts" in warnings[0]
    assert "UNIQUE constraint failed" in warnings[0] or "1062" in warnings[0]
    assert "unavailable" not in warnings[0]
