"""The bad-case list tells when a case was last reviewed in the display time zone and the
date format of the columns beside it (it showed UTC, as "2026-12-06 04:19")."""

from datetime import UTC, datetime

import pytest

from feedback.models import FeedbackEntry
from tests.factories import BadCaseReviewFactory, FeedbackEntryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


def test_the_last_review_is_in_the_display_time_zone(admin_client, settings) -> None:
    settings.TIME_ZONE = "Asia/Shanghai"
    BadCaseReviewFactory(reviewed_at=datetime(2026, 12, 6, 4, 19, tzinfo=UTC))

    page = admin_client.get("/admin/feedback/badcase/").content.decode()

    assert "ops.reviewer, Dec. 6, 2026, 12:19 p.m." in page


def test_the_readers_feedback_history_is_in_the_display_time_zone(admin_client, settings) -> None:
    settings.TIME_ZONE = "Asia/Shanghai"
    review = BadCaseReviewFactory()
    entry = FeedbackEntryFactory(session=review.session)
    # Its time is set when it is stored.
    FeedbackEntry.objects.filter(pk=entry.pk).update(
        created_at=datetime(2026, 12, 6, 4, 19, 5, tzinfo=UTC)
    )

    page = admin_client.get(f"/admin/feedback/badcase/{review.session.pk}/change/")

    assert "2026-12-06 12:19:05" in page.content.decode()
