"""Reads of the case library."""

from django.db.models import QuerySet

from caselibrary.models import CaseLibrary
from config.api import NotFound


class CaseNotFound(NotFound):
    def __init__(self, case_id: str) -> None:
        super().__init__(f'Case "{case_id}" does not exist.')


def case_list() -> QuerySet[CaseLibrary]:
    return CaseLibrary.objects.all()


def case_get(*, case_id: str) -> CaseLibrary:
    try:
        return CaseLibrary.objects.get(case_id=case_id)
    except CaseLibrary.DoesNotExist:
        raise CaseNotFound(case_id) from None
