"""The tool catalog as trace ingest fills it: every tool name a stored span carries
enters it with the catalog's defaults, up to TOOL_CATALOG_MAX_NAMES names. Past that a
new name's calls are stored and scored as a name the catalog does not hold (the span's
own hints, else the defaults), and the request's answer says the name was not added: an
agent that puts an id into its tool names would otherwise fill the page operators
classify tools on."""

from django.conf import settings

from diagnosis.models import ToolCatalogEntry, ToolKind
from diagnosis.otlp_mapping import SpanRecord
from diagnosis.selectors import tool_catalog_room

# What was read otherwise than sent, by the trace and span id of the span it is about.
Notes = dict[tuple[str, str], list[str]]


def catalog_of(
    records: list[SpanRecord],
) -> tuple[dict[str, ToolCatalogEntry], list[ToolCatalogEntry]]:
    """The catalog entries of the tools in `records`, and those of the names not in the
    catalog yet (with the catalog's defaults, not saved: catalog_add saves them)."""
    names: dict[str, bool] = {}
    for record in records:
        if record.role == "tool" and record.tool_name:
            names[record.tool_name] = names.get(record.tool_name, False) or record.is_retriever
    if not names:
        return {}, []
    entries = {e.tool_name: e for e in ToolCatalogEntry.objects.filter(tool_name__in=names)}
    unseen = [
        ToolCatalogEntry(tool_name=name, kind=ToolKind.RETRIEVAL if retriever else ToolKind.OTHER)
        for name, retriever in names.items()
        if name not in entries and len(name) <= 128
    ]
    return {**entries, **{e.tool_name: e for e in unseen}}, unseen


def catalog_add(unseen: list[ToolCatalogEntry], stored: list[SpanRecord], notes: Notes) -> None:
    """Save the entries of `unseen` whose tools the `stored` spans carry, while the
    catalog has room; note each stored span whose name found none."""
    names = {r.tool_name for r in stored if r.tool_name}
    entries = [entry for entry in unseen if entry.tool_name in names]
    if not entries:
        return
    # Two requests at once may each see the last room: the catalog may pass its bound by
    # the names of one request, never grow without one.
    room = tool_catalog_room()
    # Two requests may add the same name at once: the unique key keeps one.
    ToolCatalogEntry.objects.bulk_create(entries[:room], ignore_conflicts=True)
    left_out = {entry.tool_name for entry in entries[room:]}
    for record in stored:
        if record.tool_name in left_out:
            notes[(record.trace_id, record.span_id)].append(
                f"工具 span {record.span_id}：“{record.tool_name}” 未加入工具目录"
                f"（工具目录已满，{settings.TOOL_CATALOG_MAX_NAMES} 个工具名）"
            )
