"""The bad case's page names its fields as the rest of the admin does: capitalised in
English (as Django capitalises a model field's name), in Chinese as translated."""

import re

import pytest

from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

FIELDS = ("review_state", "review_note", "review_assignee", "review_tags")


def labels(client, review) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Each field's label on the bad case's page, by field name, read-only ones included."""
    page = client.get(f"/admin/feedback/badcase/{review.session.pk}/change/").content.decode()
    found = {}
    for row in page.split('<div class="form-row field-')[1:]:
        label = re.search(r"<label[^>]*>([^<]*):</label>", row)
        if label:
            found[row.split('"', 1)[0]] = label[1]
    return found


def test_the_english_review_form_capitalises_its_labels_as_django_does(
    admin_client, settings
) -> None:
    settings.LANGUAGE_CODE = "en"
    review = BadCaseReviewFactory()

    shown = labels(admin_client, review)

    assert [shown[name] for name in FIELDS] == ["Review state", "Reviewer note", "Assignee", "Tags"]
    # As Django labels the page's read-only fields.
    assert (shown["last_review"], shown["feedback_at"]) == ("Last review", "Feedback at")


def test_the_chinese_review_form_keeps_its_translated_labels(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    review = BadCaseReviewFactory()

    shown = labels(admin_client, review)

    assert [shown[name] for name in FIELDS] == ["复核状态", "复核备注", "处理人", "标签"]


def test_the_english_filter_choices_are_capitalised_as_the_others_beside_them(
    admin_client, admin_in_english
) -> None:
    DiagnosisSessionFactory(not_useful=True)

    bad_cases = admin_client.get("/admin/feedback/badcase/").content.decode()
    sessions = admin_client.get("/admin/diagnosis/diagnosissession/").content.decode()

    for page in (bad_cases, sessions):
        assert ">Pending</a>" in page and ">Not scored</a>" in page
    assert ">Open (new or triaged)</a>" in bad_cases
