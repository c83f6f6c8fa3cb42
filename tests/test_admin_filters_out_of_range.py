"""An admin address whose filter holds a number no row can have (past the column's range:
an edited or stale link) lists nothing; it is no server error, on any database."""

import pytest

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999999"


@pytest.mark.parametrize(
    "address",
    [
        f"/admin/diagnosis/toolinvocation/?session__id__exact={HUGE}",
        f"/admin/diagnosis/diagnosissession/?id={HUGE}",
        f"/admin/feedback/badcase/?id__exact={HUGE}",
        f"/admin/feedback/usefulwithoutevidence/?id__exact={HUGE}",
        f"/admin/caselibrary/caselibrary/?l0_hits__exact={HUGE}",
    ],
)
def test_a_filter_on_a_number_past_any_row_lists_nothing(admin_client, address: str) -> None:
    DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get(address)

    assert response.status_code == 200, response.content[:300]
    assert list(response.context["cl"].result_list) == []


@pytest.mark.parametrize(
    "address",
    [
        f"/admin/export/bad_cases.csv?id__exact={HUGE}",
        f"/admin/export/cases.csv?l0_hits__exact={HUGE}",
    ],
)
def test_an_export_filtered_on_a_number_past_any_row_holds_its_header_only(
    admin_client, address: str
) -> None:
    DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get(address)

    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode("utf-8-sig").strip().splitlines()
    assert len(lines) == 1  # the header alone
