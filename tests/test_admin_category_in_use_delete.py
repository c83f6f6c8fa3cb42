"""A fault category that cases use is not deleted: its delete address (a bookmark, a typed
URL) says why and where to go, not that the operator lacks a permission they have."""

import pytest

from caselibrary.models import FaultCategory
from tests.admin_pages import member_of
from tests.factories import CaseLibraryFactory, FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CATEGORIES = "/admin/caselibrary/faultcategory/"


def test_a_category_cases_use_is_kept_and_the_page_says_why() -> None:
    FaultCategoryFactory(code="STORAGE")
    CaseLibraryFactory(fault_category="STORAGE")
    curator = member_of("curator")

    response = curator.get(f"{CATEGORIES}STORAGE/delete/", follow=True)

    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == f"{CATEGORIES}STORAGE/change/"
    shown = " ".join(response.content.decode().split())
    assert "“STORAGE” is not deleted: cases use it. Move them to another category first." in shown
    assert curator.post(f"{CATEGORIES}STORAGE/delete/", {"post": "yes"}).status_code == 302
    assert FaultCategory.objects.filter(code="STORAGE").exists()


def test_a_category_no_case_uses_is_deleted() -> None:
    FaultCategoryFactory(code="UNUSED_ONE")
    curator = member_of("curator")

    curator.post(f"{CATEGORIES}UNUSED_ONE/delete/", {"post": "yes"})

    assert not FaultCategory.objects.filter(code="UNUSED_ONE").exists()


def test_a_viewer_is_still_refused_the_delete_page() -> None:
    FaultCategoryFactory(code="STORAGE")
    CaseLibraryFactory(fault_category="STORAGE")

    assert member_of("viewer").get(f"{CATEGORIES}STORAGE/delete/").status_code == 403


def test_general_is_kept_and_the_page_says_every_automatic_case_starts_there() -> None:
    response = member_of("curator").get(f"{CATEGORIES}GENERAL/delete/", follow=True)

    shown = " ".join(response.content.decode().split())
    assert "“GENERAL” is not deleted: every automatic case starts in it." in shown
    assert FaultCategory.objects.filter(code="GENERAL").exists()
