"""Index the waiting case changes now, or say what the index holds."""

from datetime import UTC, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from caselibrary.embedding import EMBEDDING_MODEL
from caselibrary.management.commands.reindex_cases import backend_down
from caselibrary.search_backends.base import BackendUnavailable
from caselibrary.selectors import CaseIndexStatus, case_index_status, cases_waiting
from caselibrary.services.index import case_index_build, case_indexer_running, cases_by_model
from diagnosis.management.commands._base import ServiceCommand

# A change is indexed within seconds while a worker runs.
STUCK_AFTER = timedelta(minutes=5)


class Command(ServiceCommand):
    help = (
        "Index the case changes waiting for the indexer now (the worker does this within "
        "seconds of every change), or say what the index holds."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--build",
            action="store_true",
            help="index what is waiting now (with a worker running, wait for its indexer)",
        )

    def handle(self, *args: Any, build: bool, **options: Any) -> None:
        if build:
            if case_indexer_running():
                self.stdout.write(
                    "The running worker's indexer is indexing the waiting changes; waiting for it."
                )
            started = timezone.now()
            try:
                cases = case_index_build()
            except ValidationError as error:
                raise CommandError("; ".join(error.messages)) from None
            except BackendUnavailable as error:
                raise CommandError(backend_down(error)) from None
            self.stdout.write(f"Indexed {cases} changed case(s).")
            self._fail_if_waiting(since=started, what="Not indexed")
            return
        status = case_index_status(waiting=True)
        if status.loaded_version is not None:
            self._tell_models(status)
        elif status.built_at is not None:
            # Indexed, and no case made a passage: its texts hold no search term, or it
            # was merged into another.
            self.stdout.write(
                "The index is built and holds 0 searchable passages, last at "
                f"{status.built_at:%Y-%m-%d %H:%M:%S} (a case whose texts hold no search "
                "term, or one merged into another, has none)."
            )
        else:
            self.stdout.write("Nothing is indexed yet: start the worker, or run with --build.")
        if status.requested_at:
            oldest = status.requested_at.astimezone(UTC)
            self.stdout.write(
                f"Changes are waiting (the oldest at {oldest:%Y-%m-%d %H:%M:%S} UTC)."
            )
            since = timezone.now() - STUCK_AFTER
            self._fail_if_waiting(since=since, what="Waiting for over 5 minutes")

    def _tell_models(self, status: CaseIndexStatus) -> None:
        """The cases indexed with each embedding model: one, or two half-way through a
        re-index (the state row's count is of every case, whatever its model)."""
        models = cases_by_model() or {status.loaded_version: status.loaded_cases}
        last = f", last at {status.built_at:%Y-%m-%d %H:%M:%S}." if status.built_at else "."
        if len(models) == 1:
            [(model, cases)] = models.items()
            self.stdout.write(f"{cases} cases indexed with {model}{last}")
            return
        total = sum(models.values())
        each = ", ".join(f"{cases} with {model}" for model, cases in models.items())
        self.stdout.write(f"{total} cases indexed: {each}{last}")
        done = models.get(EMBEDDING_MODEL, 0)
        if status.requested_at:
            self.stdout.write(f"Re-indexing with {EMBEDDING_MODEL}: {done} of {total} cases done.")
        else:
            self.stdout.write(
                f"Run reindex_cases to re-index the other {total - done} with {EMBEDDING_MODEL}."
            )

    def _fail_if_waiting(self, *, since: Any, what: str) -> None:
        """Fail (exit 1, for cron and CI) naming the cases still marked since before
        `since`: a case the indexer cannot index stays marked (and is tried again), so it
        is told here, not only in the log."""
        waiting = cases_waiting(since=since)
        if waiting:
            raise CommandError(
                f"{what}: "
                + ", ".join(
                    f"{case_id} (changed {at:%Y-%m-%d %H:%M:%S})" for case_id, at in waiting
                )
                + ". The worker's log tells, at ERROR with its id, a case it could not index;"
                " it is tried again at each run of the indexer. Without a worker, run with --build."
            )
