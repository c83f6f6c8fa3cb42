"""The tool_invocation table as the contract has it: `kind` is `retrieval` by default in
the database itself, as `hit_count` is 0, so a fact written by SQL (the original system's
agents, a backfill) without a kind counts as a retrieval call, as one sent to the API
does."""

import pytest
from django.db import connection
from django.utils import timezone

from diagnosis.models import ToolInvocation
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def test_a_tool_call_written_by_sql_without_a_kind_is_a_retrieval_of_no_hits() -> None:
    session = DiagnosisSessionFactory()

    # SQL, not the ORM: an ORM insert sends the model's Python default, so only a statement
    # that leaves the column out reaches the database's own default, which is under test.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO tool_invocation (session_id, tool_name, status, created_at)"
            " VALUES (%s, %s, %s, %s)",
            [session.session_id, "QueryInternalDocsTools", "SUCCESS", timezone.now()],
        )

    fact = ToolInvocation.objects.get()
    assert (fact.kind, fact.hit_count) == ("retrieval", 0)
