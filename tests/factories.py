import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from caselibrary.models import CaseLibrary, SourceType
from diagnosis.models import (
    DiagnosisSession,
    InvocationStatus,
    MatchLevel,
    SessionStatus,
    ToolInvocation,
    ToolKind,
)


class DiagnosisSessionFactory(DjangoModelFactory):
    class Meta:
        model = DiagnosisSession

    session_id = factory.Sequence(lambda n: f"sess-{n:06d}")
    user_id = "ops.tester"
    query = factory.Faker("sentence", nb_words=12)
    status = SessionStatus.RUNNING

    class Params:
        succeeded = factory.Trait(
            status=SessionStatus.SUCCESS,
            answer=factory.Faker("paragraph", nb_sentences=4),
            finished_at=factory.LazyFunction(timezone.now),
        )
        failed = factory.Trait(
            status=SessionStatus.FAILED,
            finished_at=factory.LazyFunction(timezone.now),
        )


class ToolInvocationFactory(DjangoModelFactory):
    class Meta:
        model = ToolInvocation

    session = factory.SubFactory(DiagnosisSessionFactory)
    invocation_id = factory.Sequence(lambda n: f"inv-{n:06d}")
    tool_name = "QueryInternalDocsTools"
    kind = ToolKind.RETRIEVAL
    status = InvocationStatus.SUCCESS
    match_level = MatchLevel.L1
    hit_count = 3
    query = factory.Faker("sentence", nb_words=6)
    duration_ms = 120


class CaseLibraryFactory(DjangoModelFactory):
    class Meta:
        model = CaseLibrary

    source_type = SourceType.MANUAL
    title = factory.Faker("sentence", nb_words=8)
    root_cause = factory.Faker("paragraph")
    solution = factory.Faker("paragraph")
    created_by = "ops.curator"
    updated_by = "ops.curator"
