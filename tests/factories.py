import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from caselibrary.models import CaseLibrary, FaultCategory, SourceType
from diagnosis.models import (
    DiagnosisSession,
    Feedback,
    InvocationStatus,
    MatchLevel,
    SessionStatus,
    ToolInvocation,
    ToolKind,
)
from feedback.models import (
    BadCaseReview,
    FeedbackChannel,
    FeedbackEntry,
    FeedbackReason,
    ReviewState,
)


def evaluation(score: int) -> dict:
    """A stored self_evaluation with that score (factors shaped like the rule engine's)."""
    factors = [
        {"name": "has_successful_tool_call", "delta": 30, "description": "有成功的工具调用(2次)"}
    ]
    if score != 30:
        factors.append({"name": "adjustment", "delta": score - 30, "description": "test"})
    return {"evidence_score": score, "source": "rule", "factors": factors}


class DiagnosisSessionFactory(DjangoModelFactory):
    class Meta:
        model = DiagnosisSession

    session_id = factory.Sequence(lambda n: f"sess-{n:06d}")
    user_id = "ops.tester"
    query = factory.Faker("sentence", nb_words=12)
    status = SessionStatus.RUNNING

    self_evaluation = factory.LazyAttribute(
        lambda o: evaluation(o.evidence_score) if o.evidence_score is not None else None
    )

    class Params:
        evidence_score = None
        succeeded = factory.Trait(
            status=SessionStatus.SUCCESS,
            answer=factory.Faker("paragraph", nb_sentences=4),
            finished_at=factory.LazyFunction(timezone.now),
        )
        failed = factory.Trait(
            status=SessionStatus.FAILED,
            finished_at=factory.LazyFunction(timezone.now),
        )
        useful = factory.Trait(
            succeeded=True,
            feedback=Feedback.USEFUL,
            feedback_at=factory.LazyFunction(timezone.now),
        )
        not_useful = factory.Trait(
            succeeded=True,
            feedback=Feedback.NOT_USEFUL,
            feedback_at=factory.LazyFunction(timezone.now),
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


class FaultCategoryFactory(DjangoModelFactory):
    class Meta:
        model = FaultCategory
        django_get_or_create = ("code",)

    code = factory.Sequence(lambda n: f"CATEGORY_{n}")
    name = factory.LazyAttribute(lambda o: o.code.title())


class BadCaseReviewFactory(DjangoModelFactory):
    class Meta:
        model = BadCaseReview

    session = factory.SubFactory(DiagnosisSessionFactory, not_useful=True)
    state = ReviewState.TRIAGED
    note = "looked at it"
    reviewed_by = "ops.reviewer"
    reviewed_at = factory.LazyFunction(timezone.now)


# --- Reader feedback (reasons, comments, corrections) ------------------------------------


class FeedbackEntryFactory(DjangoModelFactory):
    class Meta:
        model = FeedbackEntry

    session = factory.SubFactory(DiagnosisSessionFactory, not_useful=True)
    feedback = Feedback.NOT_USEFUL
    reason = FeedbackReason.WRONG_ROOT_CAUSE
    comment = "根因判断错了"
    correction = "MySQL 主从延迟导致读到旧数据，不是连接池耗尽"
    channel = FeedbackChannel.TOKEN
