"""The action bar's inputs next to Django's "Action:": capitalised as it is in English,
the Chinese labels unchanged."""

import re

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

BAD_CASES = "/admin/feedback/badcase/"
CASES = "/admin/caselibrary/caselibrary/"


def action_labels(response) -> list[str]:  # type: ignore[no-untyped-def]
    """The labels of the action bar, as the operator reads them."""
    bar = response.content.decode().split('<div class="actions">', 1)[1].split("</div>", 1)[0]
    return [label.strip() for label in re.findall(r"<label>\s*([^<]*?)\s*<", bar)]


def in_english(client) -> None:  # type: ignore[no-untyped-def]
    assert client.post("/i18n/setlang/", {"language": "en", "next": "/admin/"}).status_code == 302


def test_the_case_list_action_bar_labels_are_capitalised_in_english(admin_client) -> None:
    CaseLibraryFactory()
    in_english(admin_client)

    assert action_labels(admin_client.get(CASES)) == ["Action:", "Category"]


def test_the_bad_case_list_action_bar_labels_are_capitalised_in_english(admin_client) -> None:
    DiagnosisSessionFactory(not_useful=True)
    in_english(admin_client)

    assert action_labels(admin_client.get(BAD_CASES)) == ["Action:", "Assign to", "Tag"]


def test_the_action_bar_labels_stay_as_they_were_in_chinese(admin_client) -> None:
    CaseLibraryFactory()
    DiagnosisSessionFactory(not_useful=True)

    assert action_labels(admin_client.get(CASES))[1:] == ["分类"]
    assert action_labels(admin_client.get(BAD_CASES))[1:] == ["分配给", "标签"]
