"""The big lists offer no "Show counts": Django's facets count every filter choice over
the whole table on each load (4.5 s for the case library at 21,000 cases, the score
bands over every session), which the estimated counts exist to avoid."""

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


@pytest.mark.parametrize(
    "path",
    [
        "/admin/caselibrary/caselibrary/",
        "/admin/diagnosis/diagnosissession/",
        "/admin/feedback/badcase/",
        "/admin/feedback/usefulwithoutevidence/",
    ],
)
def test_the_big_lists_offer_no_facet_counts(admin_client, path) -> None:
    CaseLibraryFactory()
    DiagnosisSessionFactory(succeeded=True, feedback="not_useful")

    listed = admin_client.get(path)
    asked = admin_client.get(path, {"_facets": "True"})

    assert listed.status_code == asked.status_code == 200
    assert "_facets" not in listed.content.decode()
    assert not asked.context["cl"].add_facets
