"""The sample files of processes that ended, folded into one archive per type.

In multi-process mode (PROMETHEUS_MULTIPROC_DIR) every process that counts writes
`counter_<pid>.db` and `histogram_<pid>.db`, and each scrape reads every file. A process
that ends leaves its files (they hold counts: removing them would make totals go
backwards), so a queue worker recycled every few hundred tasks, or a gunicorn worker
restarted, left two more files for every scrape to read, for as long as the service ran.

Here the files of the processes that ended are added into `counter_0.db` and
`histogram_0.db` (prometheus_client's own file format; pid 0 names no process, and the
scrape reads the archive like any other file), written to a new file and renamed over the
old archive, and then removed: the directory holds the archive and the files of the
processes alive. All of it happens under an exclusive lock (flock) on the directory,
which a scrape holds shared while it reads (`reading`): a scrape sees the files before or
the archive after, never both and never neither.

Which process ended: each process that loads the metrics holds a shared lock on
`pid_<pid>.lock` in the directory while it runs (`claim_pid`, taken at import and again
in a forked child before it writes a sample). The lock goes with the process, however it
ends, and is seen from another container of a pod that shares the directory (where the
pid is not visible): a pid whose claim can be locked exclusively has ended. A pid without
a claim (a process of an earlier release) has ended when `os.kill(pid, 0)` finds no
process. A new process given an ended pid waits for that pid's compaction to finish before
it claims the pid, and so before it opens a sample file.

A compaction killed between the archive's rename and the removal of the files it added
would count them twice at the next one: a journal (`<type>_0.journal`) names the new
archive (its inode) and the files to remove, and the next compaction finishes the removal
when that archive is in place, or drops the journal when it is not.

Gauges follow prometheus_client's rules: a live-mode gauge's file of an ended process is
removed (mark_process_dead); the other modes' files stay.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import re
import struct
import time
from collections.abc import Iterator
from typing import IO

from prometheus_client import multiprocess
from prometheus_client.mmap_dict import MmapedDict

logger = logging.getLogger(__name__)

ARCHIVE_PID = 0
FOLDED_TYPES = ("counter", "histogram")
_FILE = re.compile(r"^(?:(counter|histogram)_(\d+)\.db|pid_(\d+)\.lock)$")


# --- A process's claim on its pid ------------------------------------------------------

_claim: IO[bytes] | None = None


def claim_pid() -> None:
    """This process's shared lock on `pid_<pid>.lock`, held until it ends. Called as the
    metrics load and in each forked child (whose inherited copy of its parent's claim is
    closed: the parent keeps its own)."""
    global _claim
    release_claim()
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory or not os.path.isdir(directory):
        return
    path = os.path.join(directory, f"pid_{os.getpid()}.lock")
    for _attempt in range(10):
        try:
            handle = open(path, "a+b")  # noqa: SIM115 - held for the process's life
        except OSError:  # a directory this process cannot write: os.kill tells it ended
            logger.warning("metrics: could not claim pid %s in %s", os.getpid(), directory)
            return
        try:
            # Waits while the compaction of an earlier process with this pid runs; it
            # removes the file as it ends, so the lock is taken again on the new one.
            fcntl.flock(handle, fcntl.LOCK_SH)
        except OSError:  # a file system without flock: os.kill tells it ended
            handle.close()
            return
        if _same_file(path, handle):
            _claim = handle
            return
        handle.close()


def release_claim() -> None:
    global _claim
    if _claim is not None:
        _claim.close()
        _claim = None


def _same_file(path: str, handle: IO[bytes]) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False


# --- The directory's lock -----------------------------------------------------------


@contextlib.contextmanager
def reading(directory: str) -> Iterator[None]:
    """The scrape's shared lock while it lists and reads the files. Where the directory
    cannot be locked (a file system without flock), no compaction can lock it either: the
    files are read as they are."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _exclusive(directory: str, wait_seconds: float) -> Iterator[bool]:
    fd = os.open(directory, os.O_RDONLY)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.05)
        yield True
    finally:
        os.close(fd)


# --- The compaction -------------------------------------------------------------------


def compact_ended(directory: str, *, wait_seconds: float = 0.0) -> int:
    """Fold the counter and histogram files of the processes that ended into the archive
    and remove them (and their live gauges, and their claims). Returns how many files
    were folded; 0 when the directory's lock was busy past `wait_seconds` (a scrape
    reading): the next compaction folds them."""
    with _exclusive(directory, wait_seconds) as locked:
        if not locked:
            return 0
        for typ in FOLDED_TYPES:
            _finish_journal(directory, typ)
        held: list[tuple[str, int]] = []
        try:
            ended = [pid for pid in _pids(directory) if _ended(directory, pid, held)]
            folded = sum(_fold(directory, typ, ended) for typ in FOLDED_TYPES)
            for pid in ended:
                multiprocess.mark_process_dead(pid, directory)
        finally:
            for path, fd in held:  # removed while locked: a new claimer takes a new file
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
                os.close(fd)
        return folded


def _pids(directory: str) -> list[int]:
    pids = set()
    for name in os.listdir(directory):
        match = _FILE.match(name)
        if match:
            pids.add(int(match.group(2) or match.group(3)))
    pids.discard(ARCHIVE_PID)
    return sorted(pids)


def _ended(directory: str, pid: int, held: list[tuple[str, int]]) -> bool:
    """Whether `pid`'s process ended; its claim, locked, is kept in `held` until its files
    are folded, so that a new process given the pid waits for that."""
    path = os.path.join(directory, f"pid_{pid}.lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return _no_such_process(pid)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held (BlockingIOError): alive; or cannot be told: taken for alive
        os.close(fd)
        return False
    held.append((path, fd))
    return True


def _no_such_process(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False  # alive (or its pid given to another process: folded when that one ends)


def _fold(directory: str, typ: str, pids: list[int]) -> int:
    files = [os.path.join(directory, f"{typ}_{pid}.db") for pid in pids]
    files = [path for path in files if os.path.exists(path)]
    if not files:
        return 0
    archive = os.path.join(directory, f"{typ}_{ARCHIVE_PID}.db")
    totals: dict[str, float] = {}
    read = []
    for path in [archive, *files]:
        try:
            values = _values(path)
        except FileNotFoundError:
            continue
        except (RuntimeError, ValueError, struct.error) as exc:  # the scrape fails on it too
            logger.warning("metrics: %s could not be read (%s), left as it is", path, exc)
            if path == archive:
                return 0
            continue
        for key, value in values.items():
            totals[key] = totals.get(key, 0.0) + value
        read.append(path)
    done = [path for path in read if path != archive]
    new = f"{archive}.new"
    with contextlib.suppress(FileNotFoundError):
        os.remove(new)
    written = MmapedDict(new)
    try:
        for key, value in totals.items():
            written.write_value(key, value, 0.0)
    finally:
        written.close()
    journal = os.path.join(directory, f"{typ}_{ARCHIVE_PID}.journal")
    with open(journal, "w") as out:
        json.dump({"archive": os.stat(new).st_ino, "remove": done}, out)
    os.replace(new, archive)
    _remove(done)
    os.remove(journal)
    return len(done)


def _values(path: str) -> dict[str, float]:
    if os.path.getsize(path) == 0:  # made, never sized: no sample
        return {}
    values: dict[str, float] = {}
    for key, value, _timestamp, _pos in MmapedDict.read_all_values_from_file(path):
        values[key] = values.get(key, 0.0) + value
    return values


def _finish_journal(directory: str, typ: str) -> None:
    """A compaction that stopped midway: its files go if its archive is in place."""
    journal = os.path.join(directory, f"{typ}_{ARCHIVE_PID}.journal")
    try:
        with open(journal) as source:
            record = json.load(source)
    except FileNotFoundError:
        return
    except ValueError:  # stopped while writing the journal: the archive was not renamed
        record = {"archive": None, "remove": []}
    archive = os.path.join(directory, f"{typ}_{ARCHIVE_PID}.db")
    try:
        renamed = os.stat(archive).st_ino == record["archive"]
    except FileNotFoundError:
        renamed = False
    if renamed:
        _remove(record["remove"])
    with contextlib.suppress(FileNotFoundError):
        os.remove(f"{archive}.new")
    os.remove(journal)


def _remove(paths: list[str]) -> None:
    for path in paths:
        try:
            os.remove(path)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
