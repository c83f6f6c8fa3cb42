"""An admin address whose filter or search holds a number no row can have (past the
column's range: an edited or stale link) lists nothing; it is no server error, on any
database. A lookup the list does not offer is refused (400) before it is run."""

import pytest

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999999"


NOT_OFFERED = [
    f"/admin/diagnosis/toolinvocation/?session__id__exact={HUGE}",
    f"/admin/diagnosis/diagnosissession/?id={HUGE}",
    f"/admin/feedback/badcase/?id__exact={HUGE}",
    f"/admin/feedback/usefulwithoutevidence/?id__exact={HUGE}",
    f"/admin/diagnosis/toolinvocation/?id__gt={HUGE}",
    f"/admin/caselibrary/caselibrary/?l0_hits__exact={HUGE}",
    f"/admin/export/bad_cases.csv?id__exact={HUGE}",
    f"/admin/export/cases.csv?l0_hits__exact={HUGE}",
]


@pytest.mark.parametrize("address", NOT_OFFERED)
def test_a_lookup_on_a_number_past_any_row_that_the_list_does_not_offer_is_refused(
    admin_client, address: str
) -> None:
    DiagnosisSessionFactory(not_useful=True)

    assert admin_client.get(address).status_code == 400


@pytest.mark.parametrize(
    "address",
    [
        f"/admin/caselibrary/caselibrary/?q={HUGE}",
        f"/admin/feedback/badcase/?q={HUGE}",
        f"/admin/diagnosis/diagnosissession/?q={HUGE}",
        f"/admin/diagnosis/toolinvocation/?session={HUGE}",
    ],
)
def test_a_search_or_filter_on_a_number_past_any_row_lists_nothing(
    admin_client, address: str
) -> None:
    DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get(address)

    assert response.status_code == 200, response.content[:300]
    assert list(response.context["cl"].result_list) == []


@pytest.mark.parametrize(
    "address",
    [
        f"/admin/export/bad_cases.csv?q={HUGE}",
        f"/admin/export/cases.csv?q={HUGE}",
    ],
)
def test_an_export_searched_for_a_number_past_any_row_holds_its_header_only(
    admin_client, address: str
) -> None:
    DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get(address)

    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode("utf-8-sig").strip().splitlines()
    assert len(lines) == 1  # the header alone
