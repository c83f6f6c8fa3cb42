"""The overview and the attribution answer only those who may read the lists they count:
staff outside every group get 403 there, as on every list and export."""

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.test import Client

from tests.admin_pages import member_of
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

OVERVIEW = "/admin/overview/"
ATTRIBUTION = "/admin/overview/attribution/"


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


_numbers = itertools.count()


def staff_with(*codenames: str) -> Client:
    """A staff user outside every group, with these model permissions alone."""
    user = get_user_model().objects.create_user(f"ops.partial{next(_numbers)}", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("url", [OVERVIEW, ATTRIBUTION])
def test_staff_without_any_permission_are_refused_the_dashboards(staff_client, url) -> None:
    DiagnosisSessionFactory(not_useful=True, evidence_score=70)

    response = staff_client.get(url)

    assert response.status_code == 403
    page = response.content.decode()
    assert "feedback rate" not in page and 'id="attribution"' not in page


@pytest.mark.parametrize("group", ["viewer", "reviewer", "curator"])
@pytest.mark.parametrize("url", [OVERVIEW, ATTRIBUTION])
def test_every_staff_group_reads_the_dashboards(group, url) -> None:
    assert member_of(group).get(url).status_code == 200


def test_the_overview_needs_every_list_it_counts() -> None:
    # Sessions, bad cases and the case library: each tile links to one of them.
    assert staff_with("view_diagnosissession", "view_badcase").get(OVERVIEW).status_code == 403
    assert staff_with("view_caselibrary").get(OVERVIEW).status_code == 403


def test_the_overview_opens_to_who_may_change_rather_than_view() -> None:
    client = staff_with("change_diagnosissession", "change_badcase", "change_caselibrary")

    assert client.get(OVERVIEW).status_code == 200


def test_the_attribution_needs_the_sessions_it_reads() -> None:
    assert staff_with("view_badcase", "view_caselibrary").get(ATTRIBUTION).status_code == 403
    assert staff_with("view_diagnosissession").get(ATTRIBUTION).status_code == 200
