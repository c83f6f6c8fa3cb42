"""rescore says how many scores it changed of the sessions it read."""

import io

import pytest
from django.core.management import call_command

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def rescore_all() -> str:
    out = io.StringIO()
    call_command("rescore", "--all", "--no-progress", stdout=out)
    return out.getvalue()


def test_a_second_rescore_in_a_row_reads_every_session_and_changes_none() -> None:
    for n in range(3):
        DiagnosisSessionFactory(succeeded=True, session_id=f"r{n}")

    first = rescore_all()
    second = rescore_all()

    assert first.startswith("Scored 3 session(s) in ")
    assert first.rstrip().endswith(": 3 changed.")
    assert second.startswith("Scored 3 session(s) in ")
    assert second.rstrip().endswith(": 0 changed.")
