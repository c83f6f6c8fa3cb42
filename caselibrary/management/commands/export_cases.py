"""Write the case library as JSONL (the API's case fields), which import_cases reads back."""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from caselibrary.selectors import cases_as_jsonl
from diagnosis.management.commands._base import ServiceCommand
from diagnosis.management.output import replaced_when_complete, write_to_stdout


class Command(ServiceCommand):
    help = (
        "Write every case as one JSON object per line, oldest first (stdout by default); "
        "a merged case too, with the case it was merged into (mergedInto)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", type=Path, help="write to this file instead")

    def handle(self, *args: Any, output: Path | None, **options: Any) -> None:
        if output is None:
            write_to_stdout(cases_as_jsonl())
            return
        count = 0
        with replaced_when_complete(output) as file:
            for line in cases_as_jsonl():
                file.write(line)
                count += 1
        self.stdout.write(f"{count} case(s) written to {output}")
