"""The admin's "Import cases" page: the upload form of `import_cases`, for one file."""

from collections.abc import Iterator
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.admin.models import ADDITION, CHANGE
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from caselibrary.models import CaseLibrary
from caselibrary.services.imports import CASE_FILE_SUFFIXES, FileOutcome, cases_import_file
from config.admin_history import log_entries
from diagnosis.text import isolated

# Cases read per statement for their entries in the admin history.
LOG_BATCH = 1000


def import_summary(outcome: FileOutcome, dry_run: bool) -> str:
    """What an upload did (or, dry run, would do), its case count singular or plural."""
    counts = {
        "created": outcome.created,
        "updated": outcome.updated,
        "same": outcome.unchanged,
        "merged": outcome.merged,
    }
    if dry_run and outcome.merged:
        text = ngettext(
            "Dry run: %(created)d case would be created, %(updated)d updated, "
            "%(same)d unchanged, %(merged)d would be merged.",
            "Dry run: %(created)d cases would be created, %(updated)d updated, "
            "%(same)d unchanged, %(merged)d would be merged.",
            outcome.created,
        )
    elif dry_run:
        text = ngettext(
            "Dry run: %(created)d case would be created, %(updated)d updated, %(same)d unchanged.",
            "Dry run: %(created)d cases would be created, %(updated)d updated, %(same)d unchanged.",
            outcome.created,
        )
    elif outcome.merged:
        text = ngettext(
            "%(created)d case created, %(updated)d updated, %(same)d unchanged, %(merged)d merged.",
            "%(created)d cases created, %(updated)d updated, %(same)d unchanged, "
            "%(merged)d merged.",
            outcome.created,
        )
    else:
        text = ngettext(
            "%(created)d case created, %(updated)d updated, %(same)d unchanged.",
            "%(created)d cases created, %(updated)d updated, %(same)d unchanged.",
            outcome.created,
        )
    return text % counts


class CaseImportForm(forms.Form):
    file = forms.FileField(
        label=_("Case file"),
        help_text=_(".jsonl or .csv with the API's case fields, or one Markdown runbook (.md)."),
    )
    dry_run = forms.BooleanField(label=_("Dry run: check and count, write nothing"), required=False)

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if not upload.name.lower().endswith(CASE_FILE_SUFFIXES):
            raise forms.ValidationError(_("Upload a .jsonl, .csv or .md file."))
        return upload


class CaseImportMixin:
    """For CaseLibraryAdmin: /admin/caselibrary/caselibrary/import/."""

    def get_urls(self) -> list:
        view = self.admin_site.admin_view(self.import_view)  # type: ignore[attr-defined]
        return [
            path("import/", view, name="caselibrary_caselibrary_import"),
            *super().get_urls(),  # type: ignore[misc]
        ]

    def has_import_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perms(
            ["caselibrary.add_caselibrary", "caselibrary.change_caselibrary"]
        )

    # The size is checked before anything reads the body: the CSRF check (which reads
    # the form) comes after it, as Django's documentation does for upload handlers.
    @csrf_exempt
    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_import_permission(request):
            raise PermissionDenied
        limit = settings.CASE_IMPORT_MAX_BYTES
        if request.method == "POST" and _declared_length(request) > limit:
            form = CaseImportForm()
            form.errors["file"] = form.error_class(
                [gettext("The file is too large: the limit is %(mb)d MB.") % {"mb": limit // 2**20}]
            )
            return self._render(request, form, status=413)
        return csrf_protect(self._import)(request)

    def _import(self, request: HttpRequest) -> HttpResponse:
        form = CaseImportForm(request.POST or None, request.FILES or None)
        if request.method != "POST" or not form.is_valid():
            return self._render(request, form)
        upload = form.cleaned_data["file"]
        dry_run = form.cleaned_data["dry_run"]
        outcome = cases_import_file(
            data=upload.read(),
            source=upload.name,
            created_by=request.user.get_username(),
            dry_run=dry_run,
        )
        if outcome.problems:
            # Every bad row (up to the service's limit), so the file is fixed in one go.
            form.errors["file"] = form.error_class(outcome.problems)
            return self._render(request, form, status=400)
        if not dry_run:
            _log_history(request, outcome)
        summary = import_summary(outcome, dry_run)
        self.message_user(request, summary, messages.SUCCESS)  # type: ignore[attr-defined]
        for note in outcome.notes:  # rows whose merge was not recorded
            self.message_user(request, note, messages.WARNING)  # type: ignore[attr-defined]
        return HttpResponseRedirect(reverse("admin:caselibrary_caselibrary_changelist"))

    def _render(
        self, request: HttpRequest, form: CaseImportForm, status: int = 200
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "opts": self.model._meta,  # type: ignore[attr-defined]
            "title": _("Import cases"),
            "form": form,
            "limit_mb": settings.CASE_IMPORT_MAX_BYTES // 2**20,
        }
        return TemplateResponse(
            request, "admin/caselibrary/caselibrary/import.html", context, status=status
        )


def _log_history(request: HttpRequest, outcome: FileOutcome) -> None:
    """Each case the file created or changed gets its entry in the admin history, naming
    the operator and the file (as the add form and the list's edits do), and each merge
    it recorded one on either case (as the admin's merge does)."""
    created = dict.fromkeys(case_id for result, case_id in outcome.cases if result == "created")
    updated = dict.fromkeys(
        case_id
        for result, case_id in outcome.cases
        if result == "updated" and case_id not in created
    )
    for flag, case_ids, message in (
        (ADDITION, list(created), gettext("Added by importing %(file)s.")),
        (CHANGE, list(updated), gettext("Changed by importing %(file)s.")),
    ):
        log_entries(request.user.pk, _cases(case_ids), flag, message % {"file": outcome.source})
    log_entries(request.user.pk, _merge_entries(outcome), CHANGE)


def _cases(case_ids: list[str]) -> Iterator[CaseLibrary]:
    for start in range(0, len(case_ids), LOG_BATCH):
        batch = case_ids[start : start + LOG_BATCH]
        yield from CaseLibrary.objects.filter(pk__in=batch).only("pk", "title")


def _merge_entries(outcome: FileOutcome) -> Iterator[tuple[CaseLibrary, str]]:
    into_this = gettext("Merged “%(title)s” (%(id)s) into this case by importing %(file)s.")
    into_other = gettext("Merged into “%(title)s” (%(id)s) by importing %(file)s.")
    for start in range(0, len(outcome.merges), LOG_BATCH):
        batch = outcome.merges[start : start + LOG_BATCH]
        ids = {case_id for pair in batch for case_id in pair}
        cases = CaseLibrary.objects.filter(pk__in=ids).only("pk", "title").in_bulk()
        for merged_id, kept_id in batch:
            kept, merged = cases[kept_id], cases[merged_id]
            for case, message, other in ((kept, into_this, merged), (merged, into_other, kept)):
                title = isolated(other.title)
                yield case, message % {"title": title, "id": other.pk, "file": outcome.source}


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0
