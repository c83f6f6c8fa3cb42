"""Import cases from JSONL, CSV or a folder of Markdown runbooks."""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from tqdm import tqdm

from caselibrary.models import CaseLibrary
from caselibrary.services.imports import (
    IMPORT_USER,
    case_files_in,
    cases_import_path,
    outcome_lines,
)
from diagnosis.management.commands._base import ServiceCommand

_USER_MAX = CaseLibrary._meta.get_field("created_by").max_length


class Command(ServiceCommand):
    help = (
        "Import cases from PATH: a .jsonl or .csv file with the API's case fields, a "
        "Markdown runbook, or a folder of them (searched recursively). The same source "
        "imported again updates its case: a file is known by its path from the working "
        "directory, so import from one place. Each file is imported whole or not at all; "
        "every bad row of a file is reported. A row's mergedInto merges its case into the "
        "case it names, once the file is written; a merge that cannot be made is reported "
        "for its row."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--dry-run", action="store_true", help="check and count everything, write nothing"
        )
        parser.add_argument(
            "--user",
            default=IMPORT_USER,
            help=f"who the cases are made by, 1 to {_USER_MAX} characters (default {IMPORT_USER})",
        )

    def handle(self, *args: Any, path: Path, dry_run: bool, user: str, **options: Any) -> None:
        # Checked once here: the cases' own validation would report it against every row.
        user = user.strip()
        if not user or len(user) > _USER_MAX:
            raise CommandError(
                _("--user must be 1 to %(max)d characters, got %(user)r")
                % {"max": _USER_MAX, "user": user}
            )
        if not path.exists():
            raise CommandError(_("%(path)s: no such file or folder") % {"path": path})
        files = len(case_files_in(path))
        if not files:
            raise CommandError(_("%(path)s: no .jsonl, .csv or .md files") % {"path": path})
        # The bar goes to stderr, and only on a terminal: logs and pipes get the summary.
        with tqdm(total=files, unit="file", disable=None, desc="import") as bar:
            outcome = cases_import_path(
                path=path, created_by=user, dry_run=dry_run, on_file=lambda _: bar.update()
            )
        *problems, summary = outcome_lines(outcome)
        for line in problems:
            self.stderr.write(line)
        self.stdout.write(summary)
        if outcome.failed:
            failed = len(outcome.failed)
            raise CommandError(
                ngettext(
                    "%(count)d file not imported: see above",
                    "%(count)d files not imported: see above",
                    failed,
                )
                % {"count": failed}
            )
