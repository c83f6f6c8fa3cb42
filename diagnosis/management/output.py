"""Where the commands' data goes: a file replaced only by a complete run, or standard
output that a reader may close early (`export_cases | head -1`)."""

import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO


@contextmanager
def replaced_when_complete(target: str | Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """A text file written beside `target` that replaces it when the block ends without an
    exception; otherwise it is removed and `target` stays as it was (a nightly export
    whose database was down leaves last night's file, not an empty or truncated one).
    The replaced file keeps its permissions; a new one has a new file's (umask).
    What is not a regular file (/dev/stdout, a named pipe) is written to directly."""
    target = Path(target)
    try:
        st_mode = target.stat().st_mode
    except FileNotFoundError:
        st_mode = stat.S_IFREG | (0o666 & ~_umask())
    if not stat.S_ISREG(st_mode):
        with target.open("w", encoding="utf-8", newline=newline) as file:
            yield file
        return
    try:
        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".part"
        )
    except OSError as exc:  # named by the file asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(target)) from exc
    try:
        os.fchmod(fd, stat.S_IMODE(st_mode))
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def write_to_stdout(lines: Iterable[str]) -> None:
    """Write `lines` to standard output; a reader that has had enough (`| head`) is not
    an error: the rest is not written, and the command ends with status 0."""
    try:
        for line in lines:
            sys.stdout.write(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # Standard output goes to /dev/null so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
