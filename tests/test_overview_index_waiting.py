"""What the admin overview and `manage.py case_index` say of an index that is not current:
cases waiting for the indexer, and a re-index half-way from one embedding model to the
next."""

import io
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from caselibrary.embedding import EMBEDDING_MODEL
from caselibrary.models import CaseChange, CasePassage
from caselibrary.services.index import case_index_build, cases_mark_for_reindex
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

URL = "/admin/overview/"
WAITING = "A rebuild is waiting."


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


def page(client) -> str:  # type: ignore[no-untyped-def]
    """The overview's text."""
    response = client.get(URL)
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_the_overview_says_a_rebuild_is_waiting_when_changes_waited_a_minute(
    admin_client,
) -> None:
    CaseLibraryFactory.create_batch(2)
    case_index_build()
    current = page(admin_client)
    CaseLibraryFactory()  # its change waits for the indexer
    just_now = page(admin_client)

    # No worker picked it up: a running one indexes a change within seconds.
    CaseChange.objects.update(changed_at=timezone.now() - timedelta(minutes=2))
    late = page(admin_client)

    assert WAITING not in current
    assert WAITING not in just_now
    assert WAITING in late


def status() -> str:
    out = io.StringIO()
    call_command("case_index", stdout=out)
    return out.getvalue()


def test_the_index_command_mid_reindex_says_how_many_cases_each_model_holds() -> None:
    cases = CaseLibraryFactory.create_batch(3)
    case_index_build()
    older = [case.case_id for case in cases[:2]]
    CasePassage.objects.filter(case_id__in=older).update(model="an-older-model")
    cases_mark_for_reindex(everything=False)

    said = status()

    assert f"3 cases indexed with {EMBEDDING_MODEL}" not in said
    assert f"1 with {EMBEDDING_MODEL}" in said and "2 with an-older-model" in said
    assert f"Re-indexing with {EMBEDDING_MODEL}: 1 of 3 cases done." in said


def test_the_index_command_tells_to_reindex_cases_left_on_another_model() -> None:
    cases = CaseLibraryFactory.create_batch(3)
    case_index_build()
    CasePassage.objects.filter(case_id=cases[0].case_id).update(model="an-older-model")

    said = status()

    assert f"2 with {EMBEDDING_MODEL}" in said and "1 with an-older-model" in said
    assert "Run reindex_cases" in said


def test_the_index_command_of_a_current_index_names_its_one_model() -> None:
    CaseLibraryFactory.create_batch(3)
    case_index_build()

    assert f"3 cases indexed with {EMBEDDING_MODEL}, last at " in status()
