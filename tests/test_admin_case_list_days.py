"""The case list writes its days as every list does (2026-09-30), the same in both
languages: English wrote 12/07/2026, which reads as July to most of its readers."""

import datetime

import pytest
from django.utils import timezone

from caselibrary.models import CaseReuse
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

LIST = "/admin/caselibrary/caselibrary/"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_last_change_and_last_hit_are_written_as_iso_days(admin_client, language) -> None:
    changed = timezone.make_aware(datetime.datetime(2026, 12, 7, 10, 30))
    case = CaseLibraryFactory()
    type(case).objects.filter(pk=case.pk).update(updated_at=changed)
    CaseReuse.objects.update_or_create(case_id=case.pk, defaults={"last_hit_at": changed})
    admin_client.cookies["django_language"] = language

    page = admin_client.get(LIST).content.decode()

    assert page.count(">2026-12-07<") == 2, page
    assert "12/07/2026" not in page and "2026年12月7日<" not in page
