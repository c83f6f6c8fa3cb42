"""A runbook's case code is the alert it is about: the title's, else the one its description
says fires; never an alert it merely points to further on."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from caselibrary.alert_names import ALERT_NAMES, find_alert_names, is_alert_name
from caselibrary.models import CaseLibrary
from caselibrary.runbooks import case_error_code, parse_runbook
from tests.factories import FaultCategoryFactory

SEE_ALSO = """# NginxHigh5xxRate

## Symptoms
The ingress answers more than 5% of requests with a 5xx status.

## Solution
Roll back the last release of the upstream.

## See also
- [KubePodCrashLooping](../kubepodcrashlooping.md), when the upstream pods restart.
"""


def code_of(text: str) -> str | None:
    return case_error_code(parse_runbook(text, source="r.md"))


def test_the_titles_alert_is_the_code_not_one_linked_further_on():
    assert code_of(SEE_ALSO) == "NginxHigh5xxRate"


def test_without_an_alert_in_the_title_the_one_the_description_says_fires_is_the_code():
    text = SEE_ALSO.replace("# NginxHigh5xxRate", "# Ingress errors").replace(
        "The ingress answers", "NginxHighHttp5xxErrorRate fires: the ingress answers"
    )

    assert code_of(text) == "NginxHighHttp5xxErrorRate"


def test_an_alert_only_linked_from_a_later_section_is_never_the_code():
    text = SEE_ALSO.replace("# NginxHigh5xxRate", "# Ingress errors")

    assert code_of(text) is None


def test_an_error_code_anywhere_is_the_code_when_no_alert_fires():
    text = SEE_ALSO.replace("# NginxHigh5xxRate", "# Ingress errors").replace(
        "Roll back", "Look for `ORA-00060` in the upstream's log, then roll back"
    )

    assert code_of(text) == "ORA-00060"


@pytest.mark.parametrize(
    "name",
    ["NginxHigh5xxRate", "GatewayHigh502Rate", "ApiHighErrorRatio", "QueueLowConsumerCount"],
)
def test_a_name_with_high_or_low_after_its_first_word_is_an_alert_name(name):
    assert is_alert_name(name)
    assert find_alert_names(f"[FIRING:1] {name} on prod") == [name]


@pytest.mark.parametrize(
    "text",
    [
        "set SampleRate and FrameRate, keep the AspectRatio",
        "the CacheHitRatio metric and the ExchangeRate table",
        "a RedisHighAvailability setup on a NetworkLowLatency link",
        "MysqlHighLevel and NginxHighPerformance tuning guides",
    ],
)
def test_rates_ratios_and_high_or_low_features_are_not_alert_names(text):
    assert find_alert_names(text) == []


@pytest.mark.parametrize(
    "name",
    [
        "PrometheusErrorSendingAlertsToAnyAlertmanager",
        "PrometheusRemoteWriteDesiredShards",
        "etcdBackendQuotaLowSpace",
        "KubeStateMetricsShardsMissing",
        "PrometheusOperatorRejectedResources",
        "KubeJobCompletion",
    ],
)
def test_the_kube_prometheus_alerts_are_in_the_catalogue(name):
    assert name in ALERT_NAMES
    assert find_alert_names(f"alertname={name.casefold()}") == [name]


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_in_english")
def test_an_imported_runbook_linking_another_alert_keeps_its_own_as_its_code(
    tmp_path: Path,
):
    FaultCategoryFactory(code="GENERAL")
    path = tmp_path / "nginx.md"
    path.write_text(SEE_ALSO, "utf-8")

    call_command("import_cases", str(path), stdout=io.StringIO(), stderr=io.StringIO())

    assert CaseLibrary.objects.get().error_code == "NginxHigh5xxRate"
