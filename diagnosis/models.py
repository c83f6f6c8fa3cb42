import re

from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from rest_framework_api_key.models import AbstractAPIKey

from diagnosis.fields import IdentifierField

SESSION_ID_MAX_LENGTH = 64
# 1-64 characters, URL-safe without escaping; UUIDs fit. Not `.` or `..`, the dot-segments
# of RFC 3986: clients and proxies resolve `/api/sessions/..` and `/api/sessions/.` away,
# so such a session could never be read or completed. `...` is an ordinary segment.
SESSION_ID_CHARACTERS = "A-Za-z0-9._:-"
SESSION_ID_REGEX = rf"\A(?!\.\.?\Z)[{SESSION_ID_CHARACTERS}]{{1,{SESSION_ID_MAX_LENGTH}}}\Z"
# The rule compiled once, for every check outside the validator.
SESSION_ID_PATTERN = re.compile(SESSION_ID_REGEX)
# The same rule in an OpenAPI schema, whose patterns are ECMA-262 (no \A or \Z).
SESSION_ID_SCHEMA_PATTERN = rf"^(?!\.\.?$)[{SESSION_ID_CHARACTERS}]{{1,{SESSION_ID_MAX_LENGTH}}}$"
# Any id of the contract's characters, dots alone included: what a stored session may have
# (one adopted from the original database may be `.` or `..`), so what a lookup takes.
SESSION_ID_LOOKUP_PATTERN = re.compile(
    rf"\A[{SESSION_ID_CHARACTERS}]{{1,{SESSION_ID_MAX_LENGTH}}}\Z"
)
validate_session_id = RegexValidator(
    SESSION_ID_REGEX,
    message=_('A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not "." or ".."'),
    code="invalid_session_id",
)


class SessionStatus(models.TextChoices):
    RUNNING = "RUNNING", _("Running")
    SUCCESS = "SUCCESS", _("Succeeded")
    FAILED = "FAILED", _("Failed")


class Feedback(models.TextChoices):
    USEFUL = "useful", _("Useful")
    NOT_USEFUL = "not_useful", _("Not useful")


class ToolKind(models.TextChoices):
    RETRIEVAL = "retrieval", _("Retrieval")
    OTHER = "other", _("Other")


class InvocationStatus(models.TextChoices):
    SUCCESS = "SUCCESS", _("Succeeded")
    FAILED = "FAILED", _("Failed")


class MatchLevel(models.TextChoices):
    L0 = "L0", _("L0 exact")
    L1 = "L1", _("L1 semantic")
    NONE = "NONE", _("No hit")


class DiagnosisSession(models.Model):
    """One question an operator asked the agent, and how the agent fared.

    `status` is the execution state only; user feedback lives in `feedback` and never
    changes it.
    """

    id = models.BigAutoField(primary_key=True)
    session_id = IdentifierField(
        _("session id"),
        max_length=SESSION_ID_MAX_LENGTH,
        unique=True,
        validators=[validate_session_id],
    )
    user_id = models.CharField(_("user id"), max_length=64, null=True, blank=True)
    query = models.TextField(_("query"))
    status = models.CharField(
        _("status"), max_length=16, choices=SessionStatus.choices, default=SessionStatus.RUNNING
    )
    answer = models.TextField(
        _("answer"), null=True, blank=True, db_comment="Agent 返回给用户的完整答案"
    )
    self_evaluation = models.JSONField(_("self evaluation"), null=True, blank=True)
    feedback = models.CharField(
        _("feedback"), max_length=16, choices=Feedback.choices, null=True, blank=True
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    feedback_at = models.DateTimeField(_("feedback at"), null=True, blank=True)

    class Meta:
        db_table = "diagnosis_session"
        verbose_name = _("diagnosis session")
        verbose_name_plural = _("diagnosis sessions")
        indexes = [
            models.Index(fields=["created_at"], name="idx_session_created"),
            models.Index(fields=["status", "created_at"], name="idx_session_status_created"),
            # GET /api/sessions?status=…&feedback=… (newest first, by id): a pair few or no
            # sessions have (FAILED and useful) read the whole table backwards, 3.8 s at
            # 481,000 sessions and 14 s at 681,000 under load; the index holds the id too.
            models.Index(fields=["status", "feedback"], name="idx_session_status_feedback"),
            models.Index(fields=["feedback", "created_at"], name="idx_session_feedback_created"),
            # Latest feedback first, within one feedback value (the useful-without-evidence
            # queue): no other index gives that order, so the optimizer cannot walk the
            # creation date past sessions without feedback.
            models.Index(fields=["feedback", "feedback_at"], name="idx_session_feedback_at"),
        ]

    def __str__(self) -> str:
        return self.session_id

    @property
    def evidence_score(self) -> int | None:
        if not self.self_evaluation:
            return None
        return self.self_evaluation.get("evidence_score")


class ToolInvocation(models.Model):
    """One fact left behind by one of the agent's tool calls."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        DiagnosisSession,
        to_field="session_id",
        db_column="session_id",
        on_delete=models.CASCADE,
        related_name="tool_invocations",
        verbose_name=_("session"),
        # The unique (session_id, invocation_id) key starts with session_id and serves
        # every lookup by session; a second index would only slow down inserts.
        db_index=False,
    )
    invocation_id = IdentifierField(_("invocation id"), max_length=64, null=True, blank=True)
    tool_name = models.CharField(_("tool name"), max_length=128)
    kind = models.CharField(
        _("kind"),
        max_length=16,
        choices=ToolKind.choices,
        default=ToolKind.RETRIEVAL,
        db_default=ToolKind.RETRIEVAL,
    )
    status = models.CharField(_("status"), max_length=16, choices=InvocationStatus.choices)
    match_level = models.CharField(
        _("match level"), max_length=8, choices=MatchLevel.choices, null=True, blank=True
    )
    hit_count = models.IntegerField(
        _("hit count"), default=0, db_default=0, validators=[MinValueValidator(0)]
    )
    query = models.TextField(_("tool query"), null=True, blank=True)
    error_message = models.TextField(_("error message"), null=True, blank=True)
    duration_ms = models.IntegerField(
        _("duration (ms)"), null=True, blank=True, validators=[MinValueValidator(0)]
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "tool_invocation"
        verbose_name = _("tool invocation")
        verbose_name_plural = _("tool invocations")
        constraints = [
            models.UniqueConstraint(
                fields=["session", "invocation_id"], name="uniq_invocation_per_session"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class ApiKeyScope(models.TextChoices):
    """What a key may do. Agents ingest and read; a front end only sends feedback."""

    FULL = "full", _("Everything")
    AGENT = "agent", _("Agent: report sessions and read them back")
    FRONTEND = "frontend", _("Front end: submit feedback only")
    CURATOR = "curator", _("Curator: add cases to the library")


class ApiPermission(models.TextChoices):
    INGEST = "ingest", _("Ingest")
    READ = "read", _("Read")
    FEEDBACK = "feedback", _("Feedback")
    CURATE = "curate", _("Curate")


SCOPE_PERMISSIONS: dict[str, frozenset[str]] = {
    ApiKeyScope.FULL: frozenset(ApiPermission.values),
    ApiKeyScope.AGENT: frozenset({ApiPermission.INGEST, ApiPermission.READ}),
    ApiKeyScope.FRONTEND: frozenset({ApiPermission.FEEDBACK}),
    ApiKeyScope.CURATOR: frozenset({ApiPermission.CURATE}),
}


class ApiKey(AbstractAPIKey):
    """A hashed API key (SHA-512 of a random 32-character secret; only the prefix is
    stored in clear so the key can be found without scanning)."""

    scope = models.CharField(
        _("scope"), max_length=16, choices=ApiKeyScope.choices, default=ApiKeyScope.FULL
    )

    class Meta(AbstractAPIKey.Meta):
        db_table = "api_key"
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def allows(self, permission: str) -> bool:
        return permission in SCOPE_PERMISSIONS[self.scope]


# --- OTLP trace ingest (POST /v1/traces) ------------------------------------------------


class SpanRole(models.TextChoices):
    """What a span stands for on the session timeline."""

    AGENT = "agent", _("Agent")
    MODEL = "model", _("Model call")
    TOOL = "tool", _("Tool")
    OTHER = "other", _("Other")


class Span(models.Model):
    """One OpenTelemetry span received on /v1/traces, redacted and trimmed.

    The facts the scoring reads are in ToolInvocation (invocation_id = span_id); this row
    keeps what the timeline shows: where the span sits, its times, arguments and result,
    and every attribute it came with.
    """

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        DiagnosisSession,
        to_field="session_id",
        db_column="session_id",
        on_delete=models.CASCADE,
        related_name="spans",
        verbose_name=_("session"),
    )
    trace_id = models.CharField(_("trace id"), max_length=32)
    span_id = models.CharField(_("span id"), max_length=16)
    parent_span_id = models.CharField(_("parent span id"), max_length=16, blank=True, default="")
    name = models.CharField(_("name"), max_length=255)
    role = models.CharField(_("role"), max_length=8, choices=SpanRole.choices)
    is_error = models.BooleanField(_("error"), default=False)
    started_at = models.DateTimeField(_("started at"))
    ended_at = models.DateTimeField(_("ended at"))
    arguments = models.TextField(_("arguments"), blank=True, default="")
    result = models.TextField(_("result"), blank=True, default="")
    error_message = models.TextField(_("error message"), blank=True, default="")
    attributes = models.JSONField(_("attributes"), default=dict)
    truncated = models.BooleanField(
        _("truncated"), default=False, help_text=_("An attribute value was cut to the limit.")
    )

    class Meta:
        db_table = "otlp_span"
        verbose_name = _("span")
        verbose_name_plural = _("spans")
        constraints = [
            models.UniqueConstraint(fields=["trace_id", "span_id"], name="uniq_span_per_trace"),
        ]
        indexes = [models.Index(fields=["session", "started_at"], name="idx_span_session_started")]

    def __str__(self) -> str:
        return f"{self.name} ({self.span_id})"


class LevelRule(models.TextChoices):
    """How a retrieval tool's match level is read from its call."""

    HITS = "hits", _("Documents retrieved > 0 -> L1, else NONE")
    CODE = "code", _("An exact code in the result -> L0, else documents > 0 -> L1, else NONE")
    NONE = "none", _("Always NONE")


class ToolCatalogEntry(models.Model):
    """Every tool name seen in traces (`other` when first seen, unless on a RETRIEVER
    span); an operator says which are retrieval tools and how their match level is read.
    What a span says wins over this: its kind is its diagnosis.tool.kind attribute, else
    `retrieval` for an OpenInference RETRIEVER span, else this entry's; its
    diagnosis.match_level and diagnosis.hit_count attributes win over the level rule and
    over text_is_one_document."""

    id = models.BigAutoField(primary_key=True)
    tool_name = IdentifierField(_("tool name"), max_length=128, unique=True)
    kind = models.CharField(
        _("kind"), max_length=16, choices=ToolKind.choices, default=ToolKind.OTHER
    )
    level_rule = models.CharField(
        _("how the level is read"), max_length=8, choices=LevelRule.choices, default=LevelRule.HITS
    )
    code_pattern = models.CharField(
        _("code pattern"),
        max_length=200,
        blank=True,
        default=r"\b[A-Z]{1,6}-?\d{3,6}\b",
        help_text=_("A regular expression for the codes the exact-code rule looks for."),
    )
    # Off in the database too: a row written by SQL counts no document in a text.
    text_is_one_document = models.BooleanField(
        _("a text result is one document"),
        default=False,
        db_default=False,
        help_text=_(
            "For a tool that answers text rather than a JSON list: a result that is not "
            "blank and that the service cannot count documents in (not a JSON list, no list "
            "under the usual keys) counts as one document retrieved, so the level rule reads "
            "L1 (or L0 with the exact-code rule when a code is found). Leave it off for a "
            'tool that answers text such as "nothing found".'
        ),
    )
    first_seen = models.DateTimeField(_("first seen"), auto_now_add=True)

    class Meta:
        db_table = "tool_catalog"
        verbose_name = _("tool")
        verbose_name_plural = _("tool catalog")

    def __str__(self) -> str:
        return self.tool_name
