"""Useful's one transaction (config/db.py), outside any test transaction: what it writes
is committed together or not at all, in one round trip on MariaDB, and the connection is
left as it was."""

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from caselibrary.models import CaseLibrary
from caselibrary.services import cases_delete
from config.db import run_in_one_transaction, short_transaction
from diagnosis.models import DiagnosisSession
from feedback.services import FeedbackConflict, FeedbackSessionNotFound, feedback_submit
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _in_transaction() -> bool:
    if connection.vendor == "sqlite":
        return connection.connection.in_transaction
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@in_transaction")
        return bool(cursor.fetchone()[0])


def test_a_first_useful_outside_a_transaction_commits_the_feedback_and_the_case() -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    result = feedback_submit(session_id="s-1", feedback="useful")

    assert DiagnosisSession.objects.get(session_id="s-1").feedback == "useful"
    assert CaseLibrary.objects.get(diagnosis_id="s-1").case_id == result.case_id
    assert connection.get_autocommit() and not _in_transaction()


def test_a_failure_after_the_update_leaves_the_session_and_the_library_unchanged(
    monkeypatch,
) -> None:
    taken = CaseLibraryFactory().case_id
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    # The new case's id collides with an existing case's: the INSERT fails after the
    # UPDATE, on the first try and on the retry.
    monkeypatch.setattr("caselibrary.services.new_uuid_string", lambda: taken)

    with pytest.raises(IntegrityError):
        feedback_submit(session_id="s-1", feedback="useful")

    assert DiagnosisSession.objects.get(session_id="s-1").feedback is None
    assert list(CaseLibrary.objects.values_list("case_id", flat=True)) == [taken]
    assert connection.get_autocommit() and not _in_transaction()
    assert CaseLibrary.objects.count() == 1  # the connection still answers


def test_a_repeated_useful_returns_the_first_case_and_writes_nothing() -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    first = feedback_submit(session_id="s-1", feedback="useful")
    rated_at = DiagnosisSession.objects.get(session_id="s-1").feedback_at

    again = feedback_submit(session_id="s-1", feedback="useful")

    assert (again.case_id, again.changed) == (first.case_id, False)
    assert CaseLibrary.objects.count() == 1
    assert DiagnosisSession.objects.get(session_id="s-1").feedback_at == rated_at


def test_a_repeated_useful_makes_the_case_again_when_an_operator_deleted_it() -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    first = feedback_submit(session_id="s-1", feedback="useful")
    cases_delete(case_ids=[first.case_id])

    again = feedback_submit(session_id="s-1", feedback="useful")

    assert again.case_id != first.case_id and not again.changed
    assert CaseLibrary.objects.get().case_id == again.case_id


@pytest.mark.parametrize(
    ("session", "error", "status"),
    [
        (None, FeedbackSessionNotFound, None),
        ({"status": "RUNNING"}, FeedbackConflict, "RUNNING"),
        ({"succeeded": True, "answer": " \n\u3000"}, FeedbackConflict, "SUCCESS"),
    ],
    ids=["unknown", "running", "blank answer"],
)
def test_a_useful_that_is_refused_writes_nothing_and_leaves_no_transaction_open(
    session, error, status
) -> None:
    if session is not None:
        DiagnosisSessionFactory(session_id="s-1", **session)

    with pytest.raises(error):
        feedback_submit(session_id="s-1", feedback="useful")

    row = DiagnosisSession.objects.filter(session_id="s-1").values("status", "feedback").first()
    assert row == (None if status is None else {"status": status, "feedback": None})
    assert not CaseLibrary.objects.exists()
    assert connection.get_autocommit() and not _in_transaction()


def test_callbacks_run_after_the_commit_and_are_dropped_on_a_rollback() -> None:
    ran: list[str] = []

    with short_transaction() as after_commit:
        after_commit(lambda: ran.append("kept"))
        assert ran == [] and _in_transaction()
    with pytest.raises(ValueError), short_transaction() as after_commit:
        after_commit(lambda: ran.append("dropped"))
        raise ValueError

    assert ran == ["kept"]


def test_inside_an_outer_transaction_it_rolls_back_with_it() -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    with pytest.raises(ValueError), transaction.atomic():
        feedback_submit(session_id="s-1", feedback="useful")
        raise ValueError

    assert DiagnosisSession.objects.get(session_id="s-1").feedback is None
    assert not CaseLibrary.objects.exists()


def test_a_first_useful_is_two_statements_between_begin_and_commit_in_one_round_trip(
    count_statements,
) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    with count_statements() as counted:
        feedback_submit(session_id="s-1", feedback="useful")

    # no `SET autocommit` before or after: BEGIN, the conditional UPDATE, the case
    # INSERT ... SELECT ... RETURNING, COMMIT (then, after the commit, the index rebuild
    # request); on MariaDB all in one query
    sent = counted.statements[: _through_commit(counted.statements)]
    verbs = [part.split()[0] for sql in sent for part in sql.split(";")]
    assert verbs == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
    assert len(sent) == (1 if connection.vendor == "mysql" else 4)


def _through_commit(statements: list[str]) -> int:
    return next(n for n, sql in enumerate(statements, 1) if sql.rstrip().endswith("COMMIT"))


def test_statements_in_one_transaction_say_what_each_did_in_order() -> None:
    DiagnosisSessionFactory(session_id="s-1", status="FAILED")
    DiagnosisSessionFactory(session_id="s-2", status="FAILED")

    outcomes = run_in_one_transaction(
        [
            ("UPDATE diagnosis_session SET status = %s WHERE status = %s", ["SUCCESS", "FAILED"]),
            ("UPDATE diagnosis_session SET status = %s WHERE session_id = %s", ["X", "none"]),
            ("SELECT session_id FROM diagnosis_session ORDER BY session_id", []),
        ]
    )

    assert [(o.rowcount, o.rows) for o in outcomes] == [
        (2, []),
        (0, []),
        (2, [("s-1",), ("s-2",)]),
    ]
    assert connection.get_autocommit() and not _in_transaction()


def test_an_error_in_a_later_statement_rolls_back_the_earlier_ones() -> None:
    DiagnosisSessionFactory(session_id="s-1", status="FAILED")

    with pytest.raises(DatabaseError):
        run_in_one_transaction(
            [
                ("UPDATE diagnosis_session SET status = %s", ["SUCCESS"]),
                ("SELECT no_such_column FROM diagnosis_session", []),
            ]
        )

    assert DiagnosisSession.objects.get().status == "FAILED"
    assert connection.get_autocommit() and not _in_transaction()


def test_with_multiple_statements_switched_off_they_go_one_by_one(
    monkeypatch, count_statements
) -> None:
    DiagnosisSessionFactory(session_id="s-1", status="FAILED")
    options = {**connection.settings_dict.get("OPTIONS", {}), "multi_statements": False}
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", options)

    with count_statements() as counted:
        (outcome,) = run_in_one_transaction(
            [("UPDATE diagnosis_session SET status = %s", ["SUCCESS"])]
        )

    assert outcome.rowcount == 1
    assert [sql.split()[0] for sql in counted.statements] == ["BEGIN", "UPDATE", "COMMIT"]
    assert DiagnosisSession.objects.get().status == "SUCCESS"


@pytest.fixture
def single_statements(monkeypatch):  # type: ignore[no-untyped-def]
    """A connection made with DB_MULTI_STATEMENTS=0: the server refuses several
    statements per query. The next test connects as configured."""
    options = {**connection.settings_dict["OPTIONS"], "multi_statements": False}
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", options)
    connection.close()
    yield
    connection.close()


@pytest.mark.mysql
def test_a_connection_refusing_several_statements_per_query_still_records_useful(
    single_statements, count_statements
) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    with connection.cursor() as cursor, pytest.raises(DatabaseError):
        cursor.execute("SELECT 1; SELECT 2")
    connection.close()

    with count_statements() as counted:
        result = feedback_submit(session_id="s-1", feedback="useful")

    assert CaseLibrary.objects.get(diagnosis_id="s-1").case_id == result.case_id
    verbs = [sql.split()[0] for sql in counted.statements]
    assert verbs[:4] == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
