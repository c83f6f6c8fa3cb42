"""Reads of sessions and their facts, shaped for the API and the admin."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import NotSupportedError
from django.db.models import (
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    Q,
    QuerySet,
    TextChoices,
    TextField,
)
from django.utils.translation import gettext_lazy as _

from diagnosis.exceptions import SessionNotFound
from diagnosis.facts_rules import INT_MAX
from diagnosis.models import (
    DiagnosisSession,
    SessionStatus,
    Span,
    ToolCatalogEntry,
    ToolInvocation,
)


class JsonInteger(Func):
    """An integer member of a JSON column, read in the database; NULL when the document
    or the member is missing.

    CAST(JSON_VALUE(...)) on MariaDB and MySQL 8.0.21+ (JSON_VALUE reads the member
    without building the unquoted copy JSON_UNQUOTE(JSON_EXTRACT(...)) makes, which
    halves the cost of a score filter that reads thousands of rows), CAST(JSON_EXTRACT())
    on SQLite.
    """

    output_field = IntegerField()

    def __init__(self, column: str, member: str) -> None:
        self.path = f"$.{member}"
        super().__init__(F(column))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list]:
        column, params = compiler.compile(self.source_expressions[0])
        if connection.vendor == "mysql":
            if connection.mysql_is_mariadb or connection.mysql_version >= (8, 0, 21):
                read = f"JSON_VALUE({column}, %s)"
            else:
                read = f"JSON_UNQUOTE(JSON_EXTRACT({column}, %s))"
            return f"CAST({read} AS SIGNED)", [*params, self.path]
        if connection.vendor == "sqlite":
            return f"CAST(JSON_EXTRACT({column}, %s) AS INTEGER)", [*params, self.path]
        raise NotSupportedError(f"JSON members are not read on {connection.vendor}")


# The score lives inside the JSON column (diagnosis_session mirrors the original schema
# and gets no column of its own): an integer, so that comparisons and sorting are
# numeric; NULL while pending.
EVIDENCE_SCORE = JsonInteger("self_evaluation", "evidence_score")


class ScoreBand(TextChoices):
    ZERO = "0", "0"
    LOW = "1-39", "1–39"
    MEDIUM = "40-64", "40–64"
    HIGH = "65+", "≥ 65"
    # No score yet, two ways: awaiting one (running, or succeeded and not scored yet), or
    # failed, which is not scored unless someone asks for it. Every session is in exactly
    # one band.
    PENDING = "pending", _("pending")
    UNSCORED = "unscored", _("not scored")


# Inclusive bounds; None means unbounded.
SCORE_BAND_BOUNDS: dict[str, tuple[int, int | None]] = {
    ScoreBand.ZERO: (0, 0),
    ScoreBand.LOW: (1, 39),
    ScoreBand.MEDIUM: (40, 64),
    ScoreBand.HIGH: (65, None),
}


def score_band(score: int | None, *, status: str | None = None) -> str:
    """The band a stored score falls in. Without a score: UNSCORED for a FAILED session
    (nothing scores it unless asked), PENDING for any other (its score is on its way)."""
    if score is None:
        return ScoreBand.UNSCORED if status == SessionStatus.FAILED else ScoreBand.PENDING
    for band, (low, high) in SCORE_BAND_BOUNDS.items():
        if score >= low and (high is None or score <= high):
            return band
    return ScoreBand.ZERO  # scores are clamped to 0-100; a negative one is treated as 0


def sessions_unscored(queryset: QuerySet[DiagnosisSession]) -> QuerySet[DiagnosisSession]:
    """Sessions whose self_evaluation is SQL NULL (pending, or scoring failed).

    Not `self_evaluation__isnull`: on MariaDB Django reads a JSON column through
    JSON_UNQUOTE() in every lookup, and `JSON_UNQUOTE(col) IS NULL` can use no index. The
    column seen as plain text gives `col IS NULL`, which the (feedback, self_evaluation(1),
    created_at) index answers. (Nor `=None`: on a JSON column that means a JSON null.)
    """
    return queryset.alias(
        evaluation_text=ExpressionWrapper(F("self_evaluation"), output_field=TextField())
    ).filter(evaluation_text__isnull=True)


def sessions_scored_before(
    queryset: QuerySet[DiagnosisSession], *, version: int
) -> QuerySet[DiagnosisSession]:
    """Sessions not scored by rule set `version`: an older one, one from before versions
    were stamped, or none yet. One JSON member read per row (the command walks the table
    in primary-key batches, so this reads each finished session once)."""
    queryset = queryset.alias(rules_version=JsonInteger("self_evaluation", "rules_version"))
    return queryset.filter(Q(rules_version__isnull=True) | Q(rules_version__lt=version))


def sessions_in_score_band(
    queryset: QuerySet[DiagnosisSession], *, band: str
) -> QuerySet[DiagnosisSession]:
    # The same split as score_band(): a FAILED session is not scored unless someone asks
    # for it, so without a score it is UNSCORED, not PENDING.
    if band == ScoreBand.PENDING:
        return sessions_unscored(queryset).exclude(status=SessionStatus.FAILED)
    if band == ScoreBand.UNSCORED:
        return sessions_unscored(queryset).filter(status=SessionStatus.FAILED)
    if band not in SCORE_BAND_BOUNDS:
        raise ValueError(f"unknown score band {band!r}")
    low, high = SCORE_BAND_BOUNDS[band]
    queryset = queryset.alias(band_score=EVIDENCE_SCORE)
    if high is None:
        return queryset.filter(band_score__gte=low)
    # BETWEEN: the score is read once per row, not once per bound.
    return queryset.filter(band_score__range=(low, high))


def _with_case_id(queryset: QuerySet[DiagnosisSession]) -> QuerySet[DiagnosisSession]:
    # One LEFT JOIN instead of a query per session for its case.
    return queryset.annotate(linked_case_id=F("case__case_id"))


def session_get(*, session_id: str) -> DiagnosisSession:
    try:
        return _with_case_id(DiagnosisSession.objects.all()).get(session_id=session_id)
    except DiagnosisSession.DoesNotExist:
        raise SessionNotFound(session_id) from None


def session_invocations(*, session_id: str) -> QuerySet[ToolInvocation]:
    return ToolInvocation.objects.filter(session_id=session_id).order_by("id")


def session_duplicate_recalls(*, session: DiagnosisSession) -> int:
    """How many of the session's case-library searches repeated an earlier one (a
    retrieval loop). The searches are the case library's rows; they are reached through
    the session's reverse relation, which needs no import of that higher app."""
    return session.case_searches.filter(repeat_of__isnull=False).count()


def session_list(
    *,
    status: str | None = None,
    feedback: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
) -> QuerySet[DiagnosisSession]:
    """Sessions, filtered; `feedback="none"` means no feedback given yet."""
    queryset = DiagnosisSession.objects.all()
    if status:
        queryset = queryset.filter(status=status)
    if feedback == "none":
        queryset = queryset.filter(feedback__isnull=True)
    elif feedback:
        queryset = queryset.filter(feedback=feedback)
    if created_after:
        queryset = queryset.filter(created_at__gte=created_after)
    if created_before:
        queryset = queryset.filter(created_at__lt=created_before)
    return _with_case_id(queryset)


# --- Session timeline ------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineRow:
    """One bar of a session's timeline, placed in percent of the session's time span."""

    name: str
    role: str  # agent / model / tool / other
    is_error: bool
    started_at: datetime
    duration_ms: int | None  # None: the call was stored without one (its clock made none)
    offset_pct: float
    width_pct: float
    depth: int
    arguments: str
    result: str
    error_message: str
    invocation_id: str | None
    # The span's row (None for a REST invocation): its attributes are read when the
    # timeline's row is opened.
    span_key: int | None
    # The REST invocation's row (None for a span): its page holds its texts whole.
    invocation_key: int | None = None
    # A model call's model and token counts, as its attributes name them ("" / None).
    model: str = ""
    input_tokens: Any = None
    output_tokens: Any = None


# Where a model call names its model and its token counts, first found wins: the GenAI
# conventions (requested model before the one that answered, as the agent chose it), their
# earlier names for the tokens, and OpenInference's.
_MODEL_ATTRIBUTES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
# Every attribute a timeline row reads of a model call (diagnosis.otlp_limits keeps them).
MODEL_CALL_KEYS = (*_MODEL_ATTRIBUTES, *_INPUT_TOKENS, *_OUTPUT_TOKENS)


# The rows a timeline shows at most: the first ones, in the order they started.
TIMELINE_ROWS = 500


def _durations_unknown(session_id: str, spans: list[Span]) -> set[str]:
    """The spans whose duration is none: a tool call stored without one (sent without an
    end, or ending before it started: diagnosis.otlp_facts), or one lasting past what
    a call's duration holds (INT_MAX ms, some 24.8 days: its clock made it up)."""
    longest = timedelta(milliseconds=INT_MAX)
    unknown = {s.span_id for s in spans if s.ended_at - s.started_at > longest}
    tools = [s.span_id for s in spans if s.role == "tool" and s.span_id not in unknown]
    if tools:
        calls = ToolInvocation.objects.filter(
            session_id=session_id, invocation_id__in=tools, duration_ms__isnull=True
        )
        unknown |= set(calls.values_list("invocation_id", flat=True))
    return unknown


def session_timeline_size(*, session_id: str) -> int:
    """How many rows the session's whole timeline has (its spans, or else its REST tool
    invocations), for saying how many of them session_timeline() left out."""
    spans = Span.objects.filter(session_id=session_id).count()
    return spans or ToolInvocation.objects.filter(session_id=session_id).count()


def session_timeline(*, session_id: str) -> list[TimelineRow]:
    """The session's OTLP spans, or else its REST tool invocations, as timeline rows (the
    first TIMELINE_ROWS)."""
    spans = list(
        Span.objects.filter(session_id=session_id).order_by("started_at", "id")[:TIMELINE_ROWS]
    )
    if spans:
        depth = _span_depths(spans)
        unknown = _durations_unknown(session_id, spans)
        bars = [
            (
                s.name,
                s.role,
                s.is_error,
                s.started_at,
                s.ended_at,
                depth[s.span_id],
                s.arguments,
                s.result,
                s.error_message,
                s.span_id if s.role == "tool" else None,
                s.pk,
                s.attributes if isinstance(s.attributes, dict) else {},
                None,
                s.span_id not in unknown,
            )
            for s in spans
        ]
    else:
        invocations = ToolInvocation.objects.filter(session_id=session_id).order_by("id")[
            :TIMELINE_ROWS
        ]
        bars = []
        for i in invocations:
            ended = i.created_at
            started = ended - timedelta(milliseconds=i.duration_ms or 0)
            bars.append(
                (
                    i.tool_name,
                    "tool",
                    i.status == "FAILED",
                    started,
                    ended,
                    0,
                    i.query or "",
                    _invocation_result(i),
                    i.error_message or "",
                    i.invocation_id,
                    None,
                    {},
                    i.pk,
                    i.duration_ms is not None,
                )
            )
    if not bars:
        return []
    first = min(bar[3] for bar in bars)
    last = max(bar[4] if bar[-1] else bar[3] for bar in bars)
    total = max((last - first).total_seconds(), 0.001)
    rows = []
    for bar in bars:
        (
            name,
            role,
            error,
            started,
            ended,
            depth,
            arguments,
            result,
            message,
            key,
            pk,
            attrs,
            invocation_key,
            known,
        ) = bar
        # One without a duration is drawn where it started: its end is none to scale by.
        ended = ended if known else started
        offset = (started - first).total_seconds() / total * 100
        width = max((ended - started).total_seconds() / total * 100, 0.5)
        rows.append(
            TimelineRow(
                name=name,
                role=role,
                is_error=error,
                started_at=started,
                duration_ms=int((ended - started).total_seconds() * 1000) if known else None,
                offset_pct=round(min(offset, 99.5), 2),
                width_pct=round(min(width, 100 - offset), 2),
                depth=min(depth, 6),
                arguments=arguments,
                result=result,
                error_message=message,
                invocation_id=key,
                span_key=pk,
                invocation_key=invocation_key,
                **(_model_call(attrs) if role == "model" else {}),
            )
        )
    return rows


def _model_call(attributes: dict[str, Any]) -> dict[str, Any]:
    """The model a model call named and its token counts, each as sent (an agent's
    attribute may be any type: the page shows it as text)."""

    def first(keys: tuple[str, ...]) -> Any:
        return next((attributes[k] for k in keys if attributes.get(k) not in (None, "")), None)

    model = first(_MODEL_ATTRIBUTES)
    return {
        "model": "" if model is None else str(model),
        "input_tokens": first(_INPUT_TOKENS),
        "output_tokens": first(_OUTPUT_TOKENS),
    }


def _span_depths(spans: list[Span]) -> dict[str, int]:
    parents = {s.span_id: s.parent_span_id for s in spans}
    depths: dict[str, int] = {}
    for span_id in parents:
        depth, current, seen = 0, parents[span_id], set()
        while current in parents and current not in seen:
            seen.add(current)
            depth += 1
            current = parents[current]
        depths[span_id] = depth
    return depths


def _invocation_result(invocation: ToolInvocation) -> str:
    if invocation.match_level:
        return f"{invocation.match_level} · {invocation.hit_count}"
    return ""


def tool_catalog_room() -> int:
    """How many tool names trace ingest may still add to the tool catalog (0: it is full,
    at TOOL_CATALOG_MAX_NAMES or past it)."""
    return max(settings.TOOL_CATALOG_MAX_NAMES - ToolCatalogEntry.objects.count(), 0)
