import pytest
from django.core.management import call_command

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation


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
    assert counts[0] == 120
    statuses = set(DiagnosisSession.objects.values_list("status", flat=True))
    assert statuses == {SessionStatus.SUCCESS, SessionStatus.FAILED, SessionStatus.RUNNING}
    assert not DiagnosisSession.objects.filter(status="SUCCESS", answer__isnull=True).exists()
    assert not DiagnosisSession.objects.filter(
        status="SUCCESS", self_evaluation__isnull=True
    ).exists()
    assert DiagnosisSession.objects.filter(feedback="not_useful").exists()
    useful = DiagnosisSession.objects.filter(feedback="useful")
    assert useful.exists()
    assert set(CaseLibrary.objects.values_list("diagnosis_id", flat=True)) == set(
        useful.values_list("session_id", flat=True)
    )
    chinese = [
        any("\u4e00" <= ch <= "\u9fff" for ch in query)
        for query in DiagnosisSession.objects.values_list("query", flat=True)
    ]
    assert any(chinese) and not all(chinese)
