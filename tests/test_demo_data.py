import pytest
from django.core.management import call_command

from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation


@pytest.mark.django_db
def test_demo_data_loads_a_realistic_mix_once_however_often_it_runs() -> None:
    call_command("load_demo_data", count=120)
    counts = (DiagnosisSession.objects.count(), ToolInvocation.objects.count())

    call_command("load_demo_data", count=120)

    assert (DiagnosisSession.objects.count(), ToolInvocation.objects.count()) == counts
    assert counts[0] == 120
    statuses = set(DiagnosisSession.objects.values_list("status", flat=True))
    assert statuses == {SessionStatus.SUCCESS, SessionStatus.FAILED, SessionStatus.RUNNING}
    assert DiagnosisSession.objects.filter(feedback="not_useful").exists()
    assert not DiagnosisSession.objects.filter(status="SUCCESS", answer__isnull=True).exists()
    chinese = [
        any("\u4e00" <= ch <= "\u9fff" for ch in query)
        for query in DiagnosisSession.objects.values_list("query", flat=True)
    ]
    assert any(chinese) and not all(chinese)
