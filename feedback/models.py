from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from diagnosis.models import DiagnosisSession, Feedback


class ReviewState(models.TextChoices):
    NEW = "new", _("New")
    TRIAGED = "triaged", _("Triaged")
    RESOLVED = "resolved", _("Resolved")


class BadCaseReview(models.Model):
    """An operator's review of a bad case, kept out of diagnosis_session on purpose.

    A bad case without a row here is NEW.
    """

    session = models.OneToOneField(
        DiagnosisSession,
        to_field="session_id",
        db_column="session_id",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="review",
        verbose_name=_("session"),
    )
    state = models.CharField(
        _("review state"),
        max_length=16,
        choices=ReviewState.choices,
        default=ReviewState.NEW,
    )
    note = models.TextField(_("reviewer note"), blank=True, default="")
    reviewed_by = models.CharField(_("reviewed by"), max_length=150, blank=True, default="")
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    # The review queue: who works on it, and the operators' own labels.
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_bad_cases",
        verbose_name=_("assignee"),
    )
    tags = models.ManyToManyField(
        "ReviewTag",
        blank=True,
        related_name="reviews",
        db_table="bad_case_review_tag",
        verbose_name=_("tags"),
    )

    class Meta:
        db_table = "bad_case_review"
        # The state filter, and the triaged/resolved lists in review order.
        indexes = [models.Index(fields=["state", "reviewed_at"], name="idx_review_state_reviewed")]
        verbose_name = _("bad-case review")
        verbose_name_plural = _("bad-case reviews")

    def __str__(self) -> str:
        return f"{self.session_id}: {self.state}"


class ReviewTag(models.Model):
    """An operator's label for bad cases ("dns", "needs-runbook", ...): a queue to filter by."""

    name = models.SlugField(_("name"), max_length=64, unique=True, allow_unicode=True)

    class Meta:
        db_table = "bad_case_tag"
        ordering = ["name"]
        verbose_name = _("review tag")
        verbose_name_plural = _("review tags")

    def __str__(self) -> str:
        return self.name


class BadCaseManager(models.Manager):
    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(feedback=Feedback.NOT_USEFUL)


class BadCase(DiagnosisSession):
    """Sessions users marked not useful: the bad-case work queue."""

    objects = BadCaseManager()

    class Meta:
        proxy = True
        verbose_name = _("bad case")
        verbose_name_plural = _("bad cases")


class UsefulWithoutEvidenceManager(models.Manager):
    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(feedback=Feedback.USEFUL)


class UsefulWithoutEvidence(DiagnosisSession):
    """Useful answers the tools barely backed (score below 40): knowledge the agent had
    that its tools lack, worth turning into docs or cases. The score filter is applied by
    its admin (feedback/selectors.py), the feedback here."""

    objects = UsefulWithoutEvidenceManager()

    class Meta:
        proxy = True
        verbose_name = _("useful without evidence")
        verbose_name_plural = _("useful without evidence")


class FeedbackReason(models.TextChoices):
    """Why an answer was not useful, as the reader chose it."""

    WRONG_ROOT_CAUSE = "wrong_root_cause", _("Wrong root cause")
    MISSING_EVIDENCE = "missing_evidence", _("Missing evidence")
    OUTDATED = "outdated", _("Outdated")
    NOT_ACTIONABLE = "not_actionable", _("Not actionable")
    OTHER = "other", _("Other")


class FeedbackChannel(models.TextChoices):
    API_KEY = "api_key", _("API key")
    TOKEN = "token", _("Feedback token")


COMMENT_MAX_LENGTH = 2000


class FeedbackEntry(models.Model):
    """One feedback given with a reason, a comment or a correction, kept as history.

    The session's `feedback` column holds the last verdict (the contract's); these rows
    keep what readers said with each one, so a later verdict never erases an earlier
    reader's correction. Plain feedback (no reason, comment or correction) writes none.
    """

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        DiagnosisSession,
        to_field="session_id",
        db_column="session_id",
        on_delete=models.CASCADE,
        related_name="feedback_entries",
        verbose_name=_("session"),
        db_index=False,  # the (session, created_at) index below serves it
    )
    feedback = models.CharField(_("feedback"), max_length=16, choices=Feedback.choices)
    reason = models.CharField(
        _("reason"), max_length=32, choices=FeedbackReason.choices, blank=True, default=""
    )
    comment = models.TextField(_("comment"), blank=True, default="")
    correction = models.TextField(_("correction"), blank=True, default="")
    channel = models.CharField(_("sent with"), max_length=16, choices=FeedbackChannel.choices)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "feedback_entry"
        indexes = [
            models.Index(fields=["session", "created_at"], name="idx_feedback_entry_session")
        ]
        verbose_name = _("feedback entry")
        verbose_name_plural = _("feedback entries")

    def __str__(self) -> str:
        return f"{self.session_id}: {self.feedback}"
