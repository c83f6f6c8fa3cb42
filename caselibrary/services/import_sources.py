"""Which case an imported file or row is: the sources the import keeps
(CaseImportSource), so that importing the same source again updates its case instead
of adding a second one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from django.db.models import Q

from caselibrary.case_files import CaseRecord
from caselibrary.models import CaseImportSource, CaseLibrary


@dataclass(frozen=True)
class Keyed:
    """A record and what identifies its source between imports."""

    record: CaseRecord
    source_path: str
    content_hash: str
    by_path: bool  # a runbook: one case per path, whatever its content
    # The key an earlier release gave the same file (the name it is shown by): read when
    # source_path finds nothing.
    legacy_path: str | None = None
    # What earlier readings of the same runbook kept as its content hash.
    earlier_hashes: tuple[str, ...] = ()
    # Read from a file on disk by the command (source_path its path from the working
    # directory), not uploaded under a name.
    on_disk: bool = False

    @property
    def name(self) -> str:
        """The file as messages name it: its name, or its path within the folder."""
        return self.legacy_path or self.source_path


def source_found(item: Keyed) -> tuple[CaseLibrary | None, CaseImportSource | None]:
    paths = list(dict.fromkeys(p for p in (item.source_path, item.legacy_path) if p))
    if item.record.case_id is not None:
        # A row naming its case (an export read back): the case, and its source when this
        # file imported it before, which tells whether the row changed since.
        case = CaseLibrary.objects.filter(case_id=item.record.case_id).first()
        found = CaseImportSource.objects.filter(case=case, source_path__in=paths)
        return case, (found.first() if case else None)
    sources = CaseImportSource.objects.select_related("case").filter(source_path__in=paths)
    if not item.by_path:
        sources = sources.filter(content_hash=item.content_hash)
    for source in sorted(sources, key=lambda s: paths.index(s.source_path)):
        if item.by_path and not _same_runbook(source, item):
            continue
        return source.case, source
    if "/" not in item.source_path:
        case, source = _imported_by_path(item)
        if case is None and item.by_path and item.on_disk:
            return _moved_here(item)  # a runbook imported from inside its own folder
        return case, source
    if item.by_path:
        return _moved_here(item)
    return None, None


def _moved_here(item: Keyed) -> tuple[CaseLibrary | None, CaseImportSource | None]:
    """A runbook known by another path: the same file reached from another working
    directory (a key is a path from there); or one renamed or moved since its last
    import: the one runbook, imported by its path from a file that is no longer there,
    with the same content, or with the same title in the same folder or under the same
    name (renamed or moved, and edited). A copy whose first file is still there is a
    runbook of its own."""
    here = Path(item.source_path).resolve()
    same_file = CaseImportSource.objects.select_related("case").filter(
        source_path__in=_keys_of(here)
    )
    if same_file:  # the longest key first: the one imported from the nearest folder
        source = max(same_file, key=lambda s: len(s.source_path))
        return source.case, source
    sources = CaseImportSource.objects.select_related("case").filter(
        Q(content_hash=item.content_hash) | Q(case__title=item.record.title),
        source_path__contains="/",
    )
    gone = []
    for source in sources:
        there = _location(source.source_path, here)
        if not there.exists():
            gone.append((source, there))
        elif there.samefile(here):
            return source.case, source
    same = [source for source, _ in gone if source.content_hash == item.content_hash] or [
        source for source, there in gone if there.parent == here.parent or there.name == here.name
    ]
    return (same[0].case, same[0]) if len(same) == 1 else (None, None)


def _keys_of(path: Path) -> list[str]:
    """The keys of the file at `path` (absolute) imported from each folder above it: for
    /srv/rb/x/a.md, srv/rb/x/a.md, rb/x/a.md and x/a.md (a key with no folder is a name,
    as an upload's), and the path itself."""
    parts = path.parts
    return [Path(*parts[i:]).as_posix() for i in range(1, len(parts) - 1)] + [path.as_posix()]


def _location(key: str, here: Path) -> Path:
    """The file a stored key names, seen from the file being imported at `here`
    (absolute). A key is a path from the directory it was imported from: when its
    folders end here's folders, that directory is the one above them (the same tree
    reached from elsewhere); otherwise the working directory is taken for it."""
    path = Path(key)
    folders = path.parent.parts
    if path.is_absolute() or not folders or here.parent.parts[-len(folders) :] != folders:
        return path.resolve()
    return Path(*here.parent.parts[: -len(folders)]) / path


def _imported_by_path(item: Keyed) -> tuple[CaseLibrary | None, CaseImportSource | None]:
    """An upload names its file alone: the one file of that name the command imported by
    its path, with the same content (a row: the same row), or a runbook of the same title."""
    sources = CaseImportSource.objects.select_related("case").filter(
        source_path__endswith="/" + item.source_path
    )
    if not item.by_path:
        sources = sources.filter(content_hash=item.content_hash)
    found = [
        source
        for source in sources
        if source.content_hash == item.content_hash or source.case.title == item.record.title
    ]
    return (found[0].case, found[0]) if len(found) == 1 else (None, None)


def _same_runbook(source: CaseImportSource, item: Keyed) -> bool:
    """Whether a runbook known by a bare file name (an upload to the admin, or an earlier
    release's single-file import) is the one being imported: the same content or the same
    title. Two runbooks both named README.md are two cases, not one overwriting the
    other. A path with its folders is trusted as it is."""
    if "/" in source.source_path:
        return True
    return source.content_hash == item.content_hash or source.case.title == item.record.title


def changes_from_file(
    changes: dict, *, wanted: dict, case: CaseLibrary, source: CaseImportSource, item: Keyed
) -> dict:
    """Of the fields where what a runbook says differs from its case, those to write: the
    ones the file changed since its last import (its text wins over a curator's there).
    A field the file says as it did is a curator's to keep. When only the reading changed
    (a release reads the same file differently), a field takes the new reading unless a
    curator changed it. A source an earlier release imported has no record of its fields:
    its case is read again when nobody changed it since, and left as it is otherwise."""
    reread = source.content_hash in item.earlier_hashes
    read = source.read_fields
    if not read:
        return {} if reread and case.updated_at > source.imported_at else changes
    return {
        name: value
        for name, value in changes.items()
        if read.get(name) != _short_hash(wanted[name])
        and not (reread and read.get(name) != _short_hash(getattr(case, name)))
    }


def _short_hash(value: object) -> str:
    text = "" if value is None else str(value).strip()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_remember(
    case: CaseLibrary, item: Keyed, source: CaseImportSource | None, *, wanted: dict
) -> None:
    read_fields = {name: _short_hash(value) for name, value in wanted.items()}
    named = item.record.case_id is not None
    if source is None and named and CaseImportSource.objects.filter(case=case).exists():
        return  # the case is another file's (a runbook's): it stays that file's
    key = _stored_key(item)
    if source is None:
        CaseImportSource.objects.create(
            case=case, source_path=key, content_hash=item.content_hash, read_fields=read_fields
        )
    elif (source.content_hash, source.source_path, source.read_fields) != (
        item.content_hash,
        key,
        read_fields,
    ):
        # Found by its earlier key, it is known by the current one from now on; but for a
        # path an upload's bare name stood for, which the command finds it by.
        if "/" not in key and "/" in source.source_path:
            source.content_hash = item.content_hash
        else:
            source.content_hash, source.source_path = item.content_hash, key
        source.read_fields = read_fields
        source.save(update_fields=["content_hash", "source_path", "read_fields", "imported_at"])


def _stored_key(item: Keyed) -> str:
    """What a source is known by: its key; for a file the command read in the working
    directory itself, its path from the folder above (runbooks/a.md, not a.md), so that an
    import from that folder finds it, and a bare name stays an upload's."""
    if not item.on_disk or "/" in item.source_path:
        return item.source_path
    keys = _keys_of(Path(item.source_path).resolve())
    return keys[-2] if len(keys) > 1 else item.source_path
