"""The admin history of changes made in bulk: one entry per object, as its page would
write, a batch of them per statement."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.utils.translation import override

from caselibrary.models import CaseLibrary
from config.admin_history import log_entries
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


def entries() -> list[tuple[str, int, str, str]]:
    return [
        (entry.object_id, entry.action_flag, entry.object_repr, entry.change_message)
        for entry in LogEntry.objects.order_by("pk")
    ]


def test_each_object_gets_an_entry_with_the_one_message_by_the_user(admin_user) -> None:
    user = admin_user
    first, second = CaseLibraryFactory(title="DNS 解析超时"), CaseLibraryFactory(title="磁盘写满")

    written = log_entries(user.pk, [first, second], CHANGE, "Changed by importing a.jsonl.")

    assert written == 2
    assert entries() == [
        (str(first.pk), CHANGE, str(first), "Changed by importing a.jsonl."),
        (str(second.pk), CHANGE, str(second), "Changed by importing a.jsonl."),
    ]
    entry = LogEntry.objects.order_by("pk").first()
    assert entry.user == user
    assert entry.content_type == ContentType.objects.get_for_model(CaseLibrary)
    assert entry.get_edited_object() == first


def test_a_structured_message_is_stored_as_the_admin_stores_it_and_reads_as_its_page_would(
    admin_user,
) -> None:
    case = CaseLibraryFactory()

    log_entries(admin_user.pk, [case], CHANGE, [{"changed": {"fields": ["fault category"]}}])

    (entry,) = LogEntry.objects.all()
    assert entry.change_message == '[{"changed": {"fields": ["fault category"]}}]'
    with override("en"):
        assert entry.get_change_message() == "Changed fault category."


def test_pairs_give_each_entry_its_own_message_and_an_object_may_come_twice(admin_user) -> None:
    kept, merged = CaseLibraryFactory(), CaseLibraryFactory()

    log_entries(
        admin_user.pk,
        [
            (kept, "Merged one into this case."),
            (merged, "Merged into the other."),
            (kept, "Again."),
        ],
        ADDITION,
    )

    assert [(object_id, message) for object_id, _, _, message in entries()] == [
        (str(kept.pk), "Merged one into this case."),
        (str(merged.pk), "Merged into the other."),
        (str(kept.pk), "Again."),
    ]


def test_a_long_title_is_cut_to_what_the_history_holds(admin_user) -> None:
    case = CaseLibrary(case_id="c-long", title="长" * 300)

    log_entries(admin_user.pk, [case], CHANGE, "")

    assert LogEntry.objects.get().object_repr == str(case)[:200]


def test_nothing_to_log_writes_nothing(admin_user) -> None:
    assert log_entries(admin_user.pk, [], CHANGE, "x") == 0
    assert not LogEntry.objects.exists()


def test_many_objects_are_logged_a_batch_per_statement(
    admin_user, django_assert_max_num_queries
) -> None:
    user = admin_user
    ContentType.objects.get_for_model(CaseLibrary)  # the content type, as any page has it
    cases = (CaseLibrary(case_id=f"c-{n}", title=f"case {n}") for n in range(2500))

    with django_assert_max_num_queries(30):
        assert log_entries(user.pk, cases, CHANGE, "Changed.") == 2500

    assert LogEntry.objects.count() == 2500
