"""Where an imported case came from (caselibrary.services.import_sources reads it)."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class CaseImportSource(models.Model):
    """Where an imported case came from, so importing the same source again updates it
    instead of adding a second case: a Markdown runbook by its path (its content hash
    says whether it changed), a JSONL/CSV row by its file's path and the row's hash."""

    case = models.OneToOneField(
        "caselibrary.CaseLibrary",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="import_source",
        verbose_name=_("case"),
    )
    source_path = models.CharField(_("source path"), max_length=500)
    content_hash = models.CharField(_("content hash"), max_length=64)
    imported_at = models.DateTimeField(_("imported at"), auto_now=True)
    # What the import read into each of the case's fields at its last import (a short hash
    # of each value): a field whose read value is the same again was not changed by the
    # file, so the case keeps what curators made of it. Empty for a source an earlier
    # release imported. Nullable, so that the release before, which writes no such
    # column, still imports after a rollback.
    read_fields = models.JSONField(_("fields as read"), null=True, blank=True, default=dict)

    class Meta:
        db_table = "case_import_source"
        verbose_name = _("case import source")
        verbose_name_plural = _("case import sources")
        constraints = [
            models.UniqueConstraint(
                fields=["source_path", "content_hash"], name="uniq_case_import_source"
            )
        ]

    def __str__(self) -> str:
        return self.source_path
