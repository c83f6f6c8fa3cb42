"""A bad case's history names the fields a review changed in the reader's language, as a
case's history does: Django keeps a change's field labels in English and translates them
when the history is read."""

import json

import pytest
from django.contrib.admin.models import LogEntry
from django.utils import translation

from feedback.admin.review_form import BadCaseReviewForm

pytestmark = pytest.mark.django_db


def test_a_reviews_changed_fields_read_in_chinese_in_its_history() -> None:
    with translation.override(None):  # as Django stores a change message
        labels = [str(field.label) for field in BadCaseReviewForm.base_fields.values()]
    entry = LogEntry(change_message=json.dumps([{"changed": {"fields": labels}}]))

    with translation.override("zh-hans"):
        message = entry.get_change_message()

    assert message == "已修改复核状态，复核备注，处理人 和 标签。"
