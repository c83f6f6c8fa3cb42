"""A new fault category's code is UPPER_SNAKE, as every seeded one is: it is what
`faultCategory` carries in the API and in imports."""

import pytest
from django.test import Client

from caselibrary.models import FaultCategory
from tests.admin_pages import member_of
from tests.factories import FaultCategoryFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CATEGORIES = "/admin/caselibrary/faultcategory/"
REFUSED = (
    "Write the code in UPPER_SNAKE: capital letters A–Z, digits and _, starting with a "
    "letter (such as NETWORK or DB_TIMEOUT)."
)


@pytest.fixture
def curator() -> Client:
    return member_of("curator")


def add(client: Client, code: str):  # type: ignore[no-untyped-def]
    return client.post(f"{CATEGORIES}add/", {"code": code, "name": "安全 / Security"})


@pytest.mark.parametrize(
    "code", ["qa security", "QA SECURITY", "qa_security", "Qa_Security", "9_LIVES", "_QA", "QA-SEC"]
)
def test_a_code_that_is_not_upper_snake_is_refused_and_says_why(curator, code) -> None:
    response = add(curator, code)

    assert response.status_code == 200
    assert REFUSED in text(response)
    assert not FaultCategory.objects.filter(name="安全 / Security").exists()


@pytest.mark.parametrize("code", ["SECURITY", "QA_SECURITY", "HTTP_5XX", "K8S"])
def test_an_upper_snake_code_is_added(curator, code) -> None:
    response = add(curator, code)

    assert response.status_code == 302
    assert FaultCategory.objects.get(code=code).name == "安全 / Security"


def test_a_code_longer_than_its_column_is_refused(curator) -> None:
    response = add(curator, "A" * 65)

    assert "at most 64 characters" in text(response)
    assert not FaultCategory.objects.filter(name="安全 / Security").exists()
    assert add(curator, "A" * 64).status_code == 302


def test_an_existing_category_is_still_renamed(curator) -> None:
    FaultCategoryFactory(code="NETWORK", name="网络")

    response = curator.post(f"{CATEGORIES}NETWORK/change/", {"name": "网络 / Network"})

    assert response.status_code == 302
    assert FaultCategory.objects.get(code="NETWORK").name == "网络 / Network"
