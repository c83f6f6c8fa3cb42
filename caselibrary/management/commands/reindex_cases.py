"""Re-embed and re-index the case library after the embedding model or the tokenizer
changed. Resumable: stopped half-way, run it again and it goes on; searches keep
answering meanwhile (a case keeps its old passages until its new ones replace them).
With a worker running, its indexer does the indexing and this follows it."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from caselibrary.embedding import EMBEDDING_MODEL
from caselibrary.search_backends.base import BackendUnavailable
from caselibrary.services.index import (
    case_index_drain,
    case_indexer_running,
    case_passages_of_other_models,
    cases_mark_for_reindex,
)
from diagnosis.management.commands._base import ServiceCommand, first_line


class Command(ServiceCommand):
    help = (
        "Re-index the cases whose vectors are of another embedding model (or all of them "
        "with --all, after a tokenizer change), with a progress bar. With a worker running, "
        "its indexer does them and this waits for it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all", action="store_true", help="every case, not only those of another model"
        )

    def stopped_line(self) -> str:
        # Stopped (Ctrl-C, SIGTERM): the cases not done yet stay marked, and a next run
        # goes on with them.
        return (
            "Stopped. The cases not re-indexed yet stay marked: run reindex_cases again "
            "and it goes on where it stopped."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        everything = options["all"]
        marked = cases_mark_for_reindex(everything=everything)
        if case_indexer_running():
            self.stdout.write(
                f"The running worker's indexer is indexing the {marked} marked cases; "
                "waiting for it (stopping this command does not stop it)."
            )
        with tqdm(total=marked, unit="change", disable=None, file=self.stderr) as bar:

            def show(done: int, total: int) -> None:
                if bar.total != total:
                    bar.reset(total=total)
                bar.update(done - bar.n)

            try:
                cases = case_index_drain(progress=show)
            except ValidationError as error:
                raise CommandError("; ".join(error.messages)) from None
            except BackendUnavailable as error:
                raise CommandError(backend_down(error)) from None
        stale = case_passages_of_other_models()
        if stale:
            raise CommandError(
                f"{stale} passages are still of another embedding model than "
                f"{EMBEDDING_MODEL}: a worker of another version indexed the marked cases. "
                "Stop the workers of the other version and run reindex_cases again."
            )
        self.stdout.write(f"Re-indexed {cases} case(s) ({marked} marked).")


def backend_down(error: BackendUnavailable) -> str:
    """The line a run the search backend failed ends with (its message names the server
    and the call, never a credential); the cases it did not index stay marked."""
    return (
        f"{first_line(error)}. The cases not indexed stay marked: run this again once the "
        "search backend answers."
    )
