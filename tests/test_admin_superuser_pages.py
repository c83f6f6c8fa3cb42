"""API keys and the task queue's pages are for superusers: no model permission opens them."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from diagnosis.models import ApiKey

pytestmark = pytest.mark.django_db

TASK_QUEUE_LISTS = [
    "/admin/django_q/success/",
    "/admin/django_q/failure/",
    "/admin/django_q/schedule/",
    "/admin/django_q/ormq/",
]


def staff_with_every_permission_of(*app_labels: str) -> Client:
    user = get_user_model().objects.create_user("ops.trusted", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=app_labels))
    client = Client()
    client.force_login(user)
    return client


def test_staff_given_the_permission_to_change_keys_cannot_change_a_keys_scope() -> None:
    key, _ = ApiKey.objects.create_key(name="reader", scope="frontend")
    staff = staff_with_every_permission_of("diagnosis")

    page = staff.get(f"/admin/diagnosis/apikey/{key.pk}/change/")
    saved = staff.post(
        f"/admin/diagnosis/apikey/{key.pk}/change/",
        {"name": "reader", "scope": "full", "expiry_date_0": "", "expiry_date_1": ""},
    )

    assert page.status_code == 403
    assert saved.status_code == 403
    key.refresh_from_db()
    assert key.scope == "frontend"


@pytest.mark.parametrize(
    "url", ["/admin/diagnosis/apikey/", "/admin/diagnosis/apikey/add/", *TASK_QUEUE_LISTS]
)
def test_staff_with_every_model_permission_get_403_on_the_superusers_pages(url) -> None:
    staff = staff_with_every_permission_of("diagnosis", "django_q")

    assert staff.get(url).status_code == 403


def test_the_index_leaves_the_superusers_pages_out_for_other_staff() -> None:
    staff = staff_with_every_permission_of("diagnosis", "django_q")

    page = staff.get("/admin/").content.decode()

    assert "/admin/diagnosis/apikey/" not in page
    assert "/admin/django_q/" not in page
    assert "/admin/diagnosis/toolcatalogentry/" in page  # the rest of the app stays


def test_the_task_queues_app_page_is_closed_to_other_staff() -> None:
    staff = staff_with_every_permission_of("django_q")

    # Django's answer for an app page with nothing its visitor may see.
    assert staff.get("/admin/django_q/").status_code == 404


@pytest.mark.parametrize("url", ["/admin/diagnosis/apikey/", *TASK_QUEUE_LISTS])
def test_a_superuser_still_opens_them(admin_client, url) -> None:
    assert admin_client.get(url).status_code == 200


def test_a_superuser_still_sees_them_on_the_index(admin_client) -> None:
    page = admin_client.get("/admin/").content.decode()

    assert "/admin/diagnosis/apikey/" in page and "/admin/django_q/" in page


def test_staff_given_the_permission_to_change_users_cannot_make_anyone_a_superuser() -> None:
    staff = staff_with_every_permission_of("auth")
    me = get_user_model().objects.get(username="ops.trusted")
    form = {
        "username": "ops.trusted",
        "is_active": "on",
        "is_staff": "on",
        "is_superuser": "on",
        "date_joined_0": "2026-12-01",
        "date_joined_1": "10:00:00",
    }

    saved = staff.post(f"/admin/auth/user/{me.pk}/change/", form)

    assert saved.status_code == 403
    me.refresh_from_db()
    assert not me.is_superuser
    assert staff.get("/admin/diagnosis/apikey/").status_code == 403


@pytest.mark.parametrize(
    "url", ["/admin/auth/user/", "/admin/auth/user/add/", "/admin/auth/group/", "/admin/auth/"]
)
def test_users_and_groups_are_closed_to_staff_with_every_auth_permission(url) -> None:
    staff = staff_with_every_permission_of("auth")

    assert staff.get(url).status_code in (403, 404)
    assert "/admin/auth/" not in staff.get("/admin/").content.decode()


@pytest.mark.parametrize("url", ["/admin/auth/user/", "/admin/auth/group/"])
def test_a_superuser_still_manages_users_and_groups(admin_client, url) -> None:
    assert admin_client.get(url).status_code == 200


def test_the_user_list_names_its_yes_and_no_icons_in_the_consoles_language(
    admin_client, settings
) -> None:
    settings.LANGUAGE_CODE = "zh-hans"

    page = admin_client.get("/admin/auth/user/").content.decode()
    added = admin_client.get("/admin/auth/user/add/").content.decode()

    assert 'alt="是"' in page
    assert 'alt="True"' not in page
    assert "创建用户之后" in added
