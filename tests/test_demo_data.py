import io

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from caselibrary.models import CaseLibrary, CaseReuse
from caselibrary.selectors import cases_find
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from feedback.demo.case_library import demo_cases, demo_searches


@pytest.fixture(autouse=True)
def _on_a_development_machine(settings) -> None:
    # load_demo_data runs with DEBUG=1 only, as `make run` sets it.
    settings.DEBUG = True


@pytest.mark.django_db
def test_load_demo_data_refuses_to_run_without_debug_and_adds_nothing(settings) -> None:
    settings.DEBUG = False

    with pytest.raises(CommandError, match=r"^load_demo_data only runs with DEBUG=1"):
        call_command("load_demo_data", count=20, stdout=io.StringIO())

    assert not DiagnosisSession.objects.exists()
    assert not CaseLibrary.objects.exists()


def test_load_demo_data_says_in_its_help_that_it_is_for_debug_only() -> None:
    command = load_command_class("feedback", "load_demo_data")

    assert "DEBUG only" in command.help


@pytest.mark.django_db
def test_demo_data_loads_a_realistic_mix_once_however_often_it_runs() -> None:
    call_command("load_demo_data", count=120)
    counts = (
        DiagnosisSession.objects.count(),
        ToolInvocation.objects.count(),
        CaseLibrary.objects.count(),
    )

    call_command("load_demo_data", count=120)

    assert (
        DiagnosisSession.objects.count(),
        ToolInvocation.objects.count(),
        CaseLibrary.objects.count(),
    ) == counts
    assert counts[0] == 120 + len(demo_searches())
    statuses = set(DiagnosisSession.objects.values_list("status", flat=True))
    assert statuses == {SessionStatus.SUCCESS, SessionStatus.FAILED, SessionStatus.RUNNING}
    assert not DiagnosisSession.objects.filter(status="SUCCESS", answer__isnull=True).exists()
    assert not DiagnosisSession.objects.filter(
        status="SUCCESS", self_evaluation__isnull=True
    ).exists()
    assert DiagnosisSession.objects.filter(feedback="not_useful").exists()
    useful = DiagnosisSession.objects.filter(feedback="useful")
    assert useful.exists()
    assert set(
        CaseLibrary.objects.filter(source_type="AUTO").values_list("diagnosis_id", flat=True)
    ) == set(useful.values_list("session_id", flat=True))
    chinese = [
        any("\u4e00" <= ch <= "\u9fff" for ch in query)
        for query in DiagnosisSession.objects.values_list("query", flat=True)
    ]
    assert any(chinese) and not all(chinese)


@pytest.mark.django_db
def test_demo_data_shows_the_loop_a_library_searched_by_sessions_it_scores(
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo_data", count=20)

    assert CaseLibrary.objects.filter(source_type="MANUAL").count() == len(demo_cases())
    searches = ToolInvocation.objects.filter(tool_name="CaseLibrarySearch")
    assert searches.count() == len(demo_searches())
    levels = set(searches.values_list("match_level", flat=True))
    assert levels == {"L0", "L1", "NONE"}
    found = DiagnosisSession.objects.filter(
        session_id__in=searches.filter(match_level__in=["L0", "L1"]).values("session_id")
    )
    assert all(s.self_evaluation["evidence_score"] >= 50 for s in found)
    assert CaseReuse.objects.filter(sessions_useful__gt=0).exists()
    # The index is built by the loader: `make run` searches before any worker ran.
    assert cases_find(query="ORA-01555 snapshot too old", limit=1).match_level == "L0"


@pytest.mark.django_db
def test_demo_sessions_carry_the_opinion_of_the_configured_provider(settings) -> None:
    settings.OPINION_PROVIDER = "heuristic"

    call_command("load_demo_data", count=20)

    scored = DiagnosisSession.objects.filter(status="SUCCESS")
    assert scored.exists()
    assert all(s.self_evaluation.get("llm_opinion") for s in scored)
