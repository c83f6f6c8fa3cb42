"""Re-embed and re-index the case library after the embedding model or the tokenizer
changed. Resumable: stopped half-way, run it again and it goes on; searches keep
answering meanwhile (a case keeps its old passages until its new ones replace them)."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from caselibrary.services.index import case_index_drain, cases_mark_for_reindex
from diagnosis.management.commands._base import ServiceCommand


class Command(ServiceCommand):
    help = (
        "Re-index the cases whose vectors are of another embedding model (or all of them "
        "with --all, after a tokenizer change), with a progress bar."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all", action="store_true", help="every case, not only those of another model"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        marked = cases_mark_for_reindex(everything=options["all"])
        with tqdm(total=marked, unit="case", disable=None, file=self.stderr) as bar:
            try:
                done = case_index_drain(progress=bar.update)
            except ValidationError as error:
                raise CommandError("; ".join(error.messages)) from None
        self.stdout.write(f"Re-indexed {done} cases ({marked} marked).")
