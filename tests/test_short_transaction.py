"""The first useful's short transaction (config/db.py), outside any test transaction: what
it writes is committed together or not at all, and the connection is left as it was."""

import pytest
from django.db import connection, transaction

from caselibrary.models import CaseLibrary
from config.db import short_transaction
from diagnosis.models import DiagnosisSession
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

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
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    def broken(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("the case insert failed")

    monkeypatch.setattr("feedback.services.case_copy_from_session", broken)
    with pytest.raises(RuntimeError):
        feedback_submit(session_id="s-1", feedback="useful")

    assert DiagnosisSession.objects.get(session_id="s-1").feedback is None
    assert not CaseLibrary.objects.exists()
    assert connection.get_autocommit() and not _in_transaction()


def test_a_repeated_useful_reads_under_its_lock_inside_the_same_transaction() -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    first = feedback_submit(session_id="s-1", feedback="useful")

    again = feedback_submit(session_id="s-1", feedback="useful")

    assert (again.case_id, again.changed) == (first.case_id, False)
    assert CaseLibrary.objects.count() == 1


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


def test_a_first_useful_is_its_statements_between_one_begin_and_one_commit(
    count_statements,
) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    with count_statements() as counted:
        feedback_submit(session_id="s-1", feedback="useful")

    # no `SET autocommit` before or after: BEGIN, the conditional UPDATE, the case
    # INSERT ... SELECT, COMMIT (then, after the commit, the index rebuild request)
    verbs = [sql.split()[0] for sql in counted.statements]
    assert verbs[: verbs.index("COMMIT") + 1] == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
