"""The bad-case pages write the last review's time as the admin writes the times beside
it (feedback at, created at), in English as in Chinese."""

import re
from datetime import UTC, datetime

import pytest

from diagnosis.models import DiagnosisSession
from tests.factories import BadCaseReviewFactory

pytestmark = pytest.mark.django_db

AT = datetime(2026, 12, 6, 4, 19, tzinfo=UTC)


@pytest.fixture
def reviewed():  # type: ignore[no-untyped-def]
    """A bad case created, marked not useful and reviewed at the same minute."""
    review = BadCaseReviewFactory(reviewed_at=AT)
    DiagnosisSession.objects.filter(pk=review.session.pk).update(created_at=AT, feedback_at=AT)
    return review


def cell(page: str, field: str) -> str:
    found = re.search(rf'<td class="field-{field}[^"]*">(.*?)</td>', page, re.S)
    assert found, field
    return re.sub(r"<[^>]+>", "", found[1]).strip()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_list_writes_the_last_review_as_the_times_beside_it(
    admin_client, settings, reviewed, language
) -> None:
    settings.LANGUAGE_CODE = language
    settings.TIME_ZONE = "Asia/Shanghai"

    page = admin_client.get("/admin/feedback/badcase/").content.decode()

    assert cell(page, "feedback_at") == cell(page, "created_at")
    assert cell(page, "reviewed").endswith(cell(page, "feedback_at"))


def test_the_bad_cases_page_writes_the_last_review_as_its_other_times(
    admin_client, settings, reviewed
) -> None:
    settings.LANGUAGE_CODE = "en"
    settings.TIME_ZONE = "Asia/Shanghai"

    page = admin_client.get(f"/admin/feedback/badcase/{reviewed.session.pk}/change/")

    text = " ".join(page.content.decode().split())
    assert "ops.reviewer, Dec. 6, 2026, 12:19 p.m." in text
    assert '<div class="readonly">Dec. 6, 2026, 12:19 p.m.</div>' in text
