from django.db import models
from django.utils.translation import gettext_lazy as _

from diagnosis.fields import IdentifierField

SESSION_ID_MAX_LENGTH = 64


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
    session_id = IdentifierField(_("session id"), max_length=SESSION_ID_MAX_LENGTH, unique=True)
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
            models.Index(fields=["feedback", "created_at"], name="idx_session_feedback_created"),
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
        _("kind"), max_length=16, choices=ToolKind.choices, default=ToolKind.RETRIEVAL
    )
    status = models.CharField(_("status"), max_length=16, choices=InvocationStatus.choices)
    match_level = models.CharField(
        _("match level"), max_length=8, choices=MatchLevel.choices, null=True, blank=True
    )
    hit_count = models.IntegerField(_("hit count"), default=0, db_default=0)
    query = models.TextField(_("tool query"), null=True, blank=True)
    error_message = models.TextField(_("error message"), null=True, blank=True)
    duration_ms = models.IntegerField(_("duration (ms)"), null=True, blank=True)
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
