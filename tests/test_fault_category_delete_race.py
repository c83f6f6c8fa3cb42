"""A fault category deleted while a case is written in it: one of the two is refused.
Never a case left in a category the taxonomy no longer has."""

import pytest
from django.core.exceptions import ValidationError

from caselibrary.models import CaseLibrary, FaultCategory
from caselibrary.services.cases import case_create_manual
from caselibrary.services.categories import fault_category_delete
from tests.row_lock_races import met

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


def test_a_category_deleted_while_a_case_is_written_in_it_keeps_the_two_consistent() -> None:
    FaultCategory.objects.create(code="QUEUE", name="消息队列")

    def write_case() -> CaseLibrary:
        return case_create_manual(
            created_by="ops.li",
            title="消费者积压",
            root_cause="消费者线程池太小",
            solution="扩容",
            fault_category="QUEUE",
        )

    # The category's row held, so the delete has checked its use (or comes to wait to).
    results = met(
        lambda: FaultCategory.objects.select_for_update().get(code="QUEUE"),
        lambda: fault_category_delete(code="QUEUE"),
        write_case,
    )

    written = CaseLibrary.objects.filter(fault_category="QUEUE").exists()
    kept = FaultCategory.objects.filter(code="QUEUE").exists()
    assert written <= kept, results
    if written:
        assert isinstance(results["first"], ValidationError)
    else:
        assert isinstance(results["second"], ValidationError)
