"""The admin index links to the overview only for those the overview opens to."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from tests.admin_pages import member_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

INDEX = "/admin/"
OVERVIEW = "/admin/overview/"


def shows_the_overview_link(client: Client) -> bool:
    page = client.get(INDEX).content.decode()
    return f'href="{OVERVIEW}"' in page or 'id="overview-link"' in page


def staff_with(*codenames: str) -> Client:
    user = get_user_model().objects.create_user("ops.partial", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_staff_without_any_permission_see_no_overview_link(staff_client) -> None:
    assert staff_client.get(OVERVIEW).status_code == 403
    assert not shows_the_overview_link(staff_client)


def test_staff_who_may_read_only_some_of_the_lists_it_counts_see_no_link() -> None:
    client = staff_with("view_diagnosissession", "view_badcase")

    assert client.get(OVERVIEW).status_code == 403
    assert not shows_the_overview_link(client)


@pytest.mark.parametrize("group", ["viewer", "reviewer", "curator"])
def test_every_staff_group_sees_the_overview_link(group) -> None:
    client = member_of(group)

    assert client.get(OVERVIEW).status_code == 200
    assert shows_the_overview_link(client)


def test_a_superuser_sees_the_overview_link(admin_client) -> None:
    assert shows_the_overview_link(admin_client)


def test_the_attribution_page_links_back_to_the_overview_only_for_those_it_opens_to() -> None:
    # The attribution counts sessions alone; the overview counts cases and bad cases too.
    only_sessions = staff_with("view_diagnosissession")
    page = only_sessions.get("/admin/overview/attribution/")

    assert page.status_code == 200
    assert f'href="{OVERVIEW}"' not in page.content.decode()
    assert (
        f'href="{OVERVIEW}"'
        in member_of("viewer").get("/admin/overview/attribution/").content.decode()
    )
