"""The bad-case pages write the last review's time as they write the times beside it
(feedback at, created at), in English as in Chinese: the list the day above the time in one
form for both languages, Django's long form in its tooltip; the bad case's page in the
admin's format."""

import re
from datetime import UTC, datetime

import pytest

from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview
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


@pytest.mark.parametrize(
    ("language", "whole"),
    [("en", "Dec. 6, 2026, 12:19 p.m."), ("zh-hans", "2026年12月6日 12:19")],
)
def test_the_list_writes_each_time_as_day_and_time_with_the_whole_in_its_tooltip(
    admin_client, settings, reviewed, language, whole
) -> None:
    settings.LANGUAGE_CODE = language
    settings.TIME_ZONE = "Asia/Shanghai"

    page = admin_client.get("/admin/feedback/badcase/").content.decode()

    assert cell(page, "feedback_at_column") == cell(page, "created_at_column") == "2026-12-06 12:19"
    assert cell(page, "reviewed").endswith(cell(page, "feedback_at_column"))
    assert page.count(f'title="{whole}"') == 3


def test_the_bad_cases_page_writes_the_last_review_as_its_other_times(
    admin_client, settings, reviewed
) -> None:
    settings.LANGUAGE_CODE = "en"
    settings.TIME_ZONE = "Asia/Shanghai"

    page = admin_client.get(f"/admin/feedback/badcase/{reviewed.session.pk}/change/")

    text = " ".join(page.content.decode().split())
    assert "ops.reviewer, Dec. 6, 2026, 12:19 p.m." in text
    assert '<div class="readonly">Dec. 6, 2026, 12:19 p.m.</div>' in text


def test_the_list_puts_the_reviewers_name_on_a_line_of_its_own_whole_in_the_tooltip(
    admin_client, settings, reviewed
) -> None:
    settings.LANGUAGE_CODE = "en"
    settings.TIME_ZONE = "Asia/Shanghai"
    name = "zhangsan.very-long-reviewer-name-from-the-sre-platform-team-xxxx"
    BadCaseReview.objects.filter(pk=reviewed.pk).update(reviewed_by=name)

    page = admin_client.get("/admin/feedback/badcase/").content.decode()

    # Cut short by its class when longer than the column (admin.css), above day and time.
    assert f'<span class="user-name">{name}</span>, <time class="list-time"' in page
    assert f'title="{name}, Dec. 6, 2026, 12:19 p.m."' in page
