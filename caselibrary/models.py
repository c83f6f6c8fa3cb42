from django.db import models
from django.utils.translation import gettext_lazy as _

from diagnosis.fields import UUIDStringField, new_uuid_string
from diagnosis.models import DiagnosisSession

SYSTEM_USER = "system"
GENERAL_CATEGORY = "GENERAL"
# A case made from a session takes the first characters of its question as its title.
TITLE_FROM_QUERY_LENGTH = 100


class SourceType(models.TextChoices):
    AUTO = "AUTO", _("Automatic (from feedback)")
    MANUAL = "MANUAL", _("Manual")


class CaseLibrary(models.Model):
    """A curated incident case: what went wrong and how it was fixed."""

    case_id = UUIDStringField(
        _("case id"), primary_key=True, default=new_uuid_string, editable=False
    )
    # The source session's sessionId. A relation in the ORM (so lists can join it), a
    # plain unique VARCHAR in the database, as in the original schema: a case outlives
    # its session, and the unique key is what makes `useful` idempotent.
    diagnosis = models.OneToOneField(
        DiagnosisSession,
        to_field="session_id",
        db_column="diagnosis_id",
        db_constraint=False,
        on_delete=models.DO_NOTHING,
        null=True,
        blank=True,
        related_name="case",
        verbose_name=_("source session"),
    )
    source_type = models.CharField(_("source type"), max_length=16, choices=SourceType.choices)
    fault_category = models.CharField(_("fault category"), max_length=64, default=GENERAL_CATEGORY)
    error_code = models.CharField(_("error code"), max_length=64, null=True, blank=True)
    title = models.CharField(_("title"), max_length=255)
    root_cause = models.TextField(_("root cause"))
    solution = models.TextField(_("solution"))
    created_by = models.CharField(_("created by"), max_length=64, default=SYSTEM_USER)
    updated_by = models.CharField(_("updated by"), max_length=64, default=SYSTEM_USER)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        db_table = "case_library"
        verbose_name = _("case")
        verbose_name_plural = _("cases")
        indexes = [
            models.Index(fields=["created_at"], name="idx_case_created"),
            models.Index(fields=["fault_category", "created_at"], name="idx_case_category_created"),
            models.Index(fields=["source_type", "created_at"], name="idx_case_source_created"),
        ]

    def __str__(self) -> str:
        return self.title


class FaultCategory(models.Model):
    """The taxonomy a case's fault_category is chosen from; operators extend it."""

    code = models.CharField(_("code"), max_length=64, primary_key=True)
    name = models.CharField(_("name"), max_length=128)
    description = models.TextField(_("description"), blank=True, default="")
    # What puts an AUTO case in this category (caselibrary/structuring.py): words and
    # phrases, Chinese or English, separated by commas or lines.
    keywords = models.TextField(
        _("keywords"),
        blank=True,
        default="",
        help_text=_(
            "Words that put a new automatic case in this category, separated by commas or "
            "new lines, e.g. 慢查询, deadlock. The category with the most keywords found in "
            "the question and answer wins; none found keeps GENERAL."
        ),
    )

    class Meta:
        db_table = "fault_category"
        ordering = ["code"]
        verbose_name = _("fault category")
        verbose_name_plural = _("fault categories")

    def __str__(self) -> str:
        return f"{self.code} · {self.name}"


class CaseStructuring(models.Model):
    """What the automatic structuring proposed for an AUTO case, kept beside it.

    The case itself holds what operators make of it; comparing the two tells how often
    the proposal is kept. A table of its own: case_library mirrors an adopted schema.
    """

    # No foreign key in the database: case_library may be written by the system it was
    # adopted from (rows deleted there must not fail on this table). The ORM still
    # deletes the proposal with its case; one orphaned elsewhere is left out by the join.
    case = models.OneToOneField(
        CaseLibrary,
        on_delete=models.CASCADE,
        db_constraint=False,
        primary_key=True,
        db_column="case_id",
        related_name="structuring",
        verbose_name=_("case"),
    )
    proposed_category = models.CharField(_("proposed fault category"), max_length=64)
    proposed_error_code = models.CharField(
        _("proposed error code"), max_length=64, null=True, blank=True
    )
    method = models.CharField(_("method"), max_length=32)
    proposed_at = models.DateTimeField(_("proposed at"))

    class Meta:
        db_table = "case_structuring"
        verbose_name = _("case structuring")
        verbose_name_plural = _("case structurings")

    def __str__(self) -> str:
        return f"{self.proposed_category} / {self.proposed_error_code or '-'}"
