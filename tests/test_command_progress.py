"""A command whose output goes to a file or a pipe prints no progress bar (a log would fill
with its redraws), and still prints its summary line."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# What a tqdm bar is drawn with: redraws start with a carriage return, the bar sits
# between "|" characters and fills with blocks.
BAR_MARKS = ("\r", "|", "█")


def printed(capsys, command: tuple[str, ...]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """What the command wrote, its own streams (given as files) and the process's."""
    out, err = io.StringIO(), io.StringIO()
    call_command(*command, stdout=out, stderr=err)
    process = capsys.readouterr()
    return out.getvalue() + process.out, err.getvalue() + process.err


def test_rescore_into_a_file_prints_its_summary_and_no_bar(capsys) -> None:
    DiagnosisSessionFactory.create_batch(3, succeeded=True)

    out, err = printed(capsys, ("rescore", "--all"))

    assert out.startswith("Scored 3 session(s) in ")
    assert not [mark for mark in BAR_MARKS if mark in out + err], err


def test_rescore_of_opinions_into_a_file_prints_its_summary_and_no_bar(capsys, settings) -> None:
    settings.OPINION_PROVIDER = "heuristic"
    DiagnosisSessionFactory.create_batch(3, succeeded=True)
    call_command("rescore", "--all", "--no-progress", stdout=io.StringIO())

    out, err = printed(capsys, ("rescore", "--opinion", "--all"))

    assert out.startswith("Formed 3 opinion(s) in ")
    assert not [mark for mark in BAR_MARKS if mark in out + err], err


def test_reindex_cases_into_a_file_prints_its_summary_and_no_bar(capsys) -> None:
    CaseLibraryFactory.create_batch(3)
    case_index_build()

    out, err = printed(capsys, ("reindex_cases", "--all"))

    assert "Re-indexed 3 case(s) (3 marked)." in out
    assert not [mark for mark in BAR_MARKS if mark in out + err], err


def test_purge_sessions_into_a_file_prints_its_summary_and_no_bar(capsys) -> None:
    old = DiagnosisSessionFactory.create_batch(3)
    DiagnosisSessionFactory._meta.model.objects.filter(pk__in=[s.pk for s in old]).update(
        created_at=timezone.now() - timedelta(days=400)
    )

    out, err = printed(capsys, ("purge_sessions", "--older-than", "180d", "--batch", "1"))

    assert "3 session(s) created before" in out and "removed." in out
    assert not [mark for mark in BAR_MARKS if mark in out + err], err
