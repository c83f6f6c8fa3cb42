from django.db import models
from django.db.models.functions import Now
from django.utils.translation import gettext_lazy as _

from diagnosis.fields import IdentifierField, UUIDStringField, new_uuid_string
from diagnosis.models import DiagnosisSession

SYSTEM_USER = "system"
GENERAL_CATEGORY = "GENERAL"
# A case made from a session takes the first characters of its question as its title.
TITLE_FROM_QUERY_LENGTH = 100


def title_from_query(query: str | None, session_id: str) -> str:
    """The title of a case made from a session: the question's first 100 characters
    (SPEC §4). When those are blanks only (an OTLP trace keeps the question as the agent
    sent it: 150 spaces in front made a title of blanks, which `import_cases` refuses),
    the first 100 of its words; a question of blanks only, which OTLP may store too (the
    REST API refuses it), gives the session id: a title must say something, and the id
    names its source."""
    title = (query or "")[:TITLE_FROM_QUERY_LENGTH]
    if title.strip():
        return title
    return (query or "").strip()[:TITLE_FROM_QUERY_LENGTH] or session_id


class SourceType(models.TextChoices):
    AUTO = "AUTO", _("Automatic (from feedback)")
    MANUAL = "MANUAL", _("Manual")


class CaseLibrary(models.Model):
    """A curated incident case: what went wrong and how it was fixed."""

    case_id = UUIDStringField(
        _("case id"), primary_key=True, default=new_uuid_string, editable=False
    )
    # The source session's sessionId. A relation in the ORM (so lists can join it), a
    # plain unique VARCHAR in the database, as in the original schema: a case outlives
    # its session, and the unique key is what makes `useful` idempotent.
    diagnosis = models.OneToOneField(
        DiagnosisSession,
        to_field="session_id",
        db_column="diagnosis_id",
        db_constraint=False,
        on_delete=models.DO_NOTHING,
        null=True,
        blank=True,
        related_name="case",
        verbose_name=_("source session"),
    )
    source_type = models.CharField(_("source type"), max_length=16, choices=SourceType.choices)
    fault_category = models.CharField(_("fault category"), max_length=64, default=GENERAL_CATEGORY)
    error_code = models.CharField(_("error code"), max_length=64, null=True, blank=True)
    title = models.CharField(_("title"), max_length=255)
    root_cause = models.TextField(_("root cause"))
    solution = models.TextField(_("solution"))
    created_by = models.CharField(_("created by"), max_length=64, default=SYSTEM_USER)
    updated_by = models.CharField(_("updated by"), max_length=64, default=SYSTEM_USER)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        db_table = "case_library"
        verbose_name = _("case")
        verbose_name_plural = _("cases")
        indexes = [
            models.Index(fields=["created_at"], name="idx_case_created"),
            models.Index(fields=["fault_category", "created_at"], name="idx_case_category_created"),
            models.Index(fields=["source_type", "created_at"], name="idx_case_source_created"),
            # The case search's exact path by error code, when no search index is loaded.
            models.Index(fields=["error_code"], name="idx_case_error_code"),
        ]

    def __str__(self) -> str:
        return self.title


class FaultCategory(models.Model):
    """The taxonomy a case's fault_category is chosen from; operators extend it."""

    code = models.CharField(_("code"), max_length=64, primary_key=True)
    name = models.CharField(_("name"), max_length=128)
    description = models.TextField(_("description"), blank=True, default="")
    # What puts an AUTO case in this category (caselibrary/structuring.py): words and
    # phrases, Chinese or English, separated by commas or lines.
    keywords = models.TextField(
        _("keywords"),
        blank=True,
        default="",
        help_text=_(
            "Words that put a new automatic case in this category, separated by commas or "
            "new lines, e.g. 慢查询, deadlock. The category with the most keywords found in "
            "the question and answer wins; none found keeps GENERAL."
        ),
    )

    class Meta:
        db_table = "fault_category"
        ordering = ["code"]
        verbose_name = _("fault category")
        verbose_name_plural = _("fault categories")

    def __str__(self) -> str:
        return f"{self.code} · {self.name}"


class CaseSearch(models.Model):
    """One search of the case library made on behalf of a session (the agent's retrieval
    tool asking "have we seen this before?"), kept for repeated-recall detection and to
    tie later feedback to the cases found.

    The search's fact for scoring is its `tool_invocation` row (`invocation_id` names it);
    this row holds what that table has no column for.
    """

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        DiagnosisSession,
        to_field="session_id",
        db_column="session_id",
        on_delete=models.CASCADE,
        related_name="case_searches",
        verbose_name=_("session"),
        db_index=False,  # the (session, query_key) index starts with it
    )
    invocation_id = models.CharField(_("invocation id"), max_length=64)
    query = models.TextField(_("query"))
    # A digest of the normalised query: equal questions asked twice share it.
    query_key = models.CharField(_("query key"), max_length=40)
    error_code = models.CharField(_("error code"), max_length=64, null=True, blank=True)
    match_level = models.CharField(_("match level"), max_length=8)
    hit_count = models.IntegerField(_("hit count"), default=0)
    case_ids = models.JSONField(_("cases found"), default=list)
    repeat_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("repeat of"),
    )
    duration_ms = models.IntegerField(_("duration (ms)"), default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "case_search"
        verbose_name = _("case search")
        verbose_name_plural = _("case searches")
        indexes = [
            models.Index(fields=["session", "query_key"], name="idx_case_search_session"),
            # The outcome sweep reads the last days' searches.
            models.Index(fields=["created_at"], name="idx_case_search_created"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.match_level}"

    @property
    def is_repeat(self) -> bool:
        return self.repeat_of_id is not None


class CaseSearchHit(models.Model):
    """A case one session's search found: what ties the session's later feedback to it."""

    id = models.BigAutoField(primary_key=True)
    search = models.ForeignKey(
        CaseSearch, on_delete=models.CASCADE, related_name="hits", verbose_name=_("search")
    )
    # Plain columns, as case_library.diagnosis_id is: a hit outlives its case.
    case_id = models.CharField(_("case id"), max_length=36)
    session_id = IdentifierField(_("session id"), max_length=64)
    match_level = models.CharField(_("match level"), max_length=8)
    rank = models.PositiveSmallIntegerField(_("rank"))

    class Meta:
        db_table = "case_search_hit"
        verbose_name = _("case search hit")
        verbose_name_plural = _("case search hits")
        indexes = [
            models.Index(fields=["case_id", "session_id"], name="idx_case_hit_case"),
            models.Index(fields=["session_id"], name="idx_case_hit_session"),
        ]

    def __str__(self) -> str:
        return f"{self.case_id} <- {self.session_id}"


class CaseReuse(models.Model):
    """How a case fares once found: its hits, and the feedback later given to the sessions
    that found it. Kept beside case_library (whose columns mirror the original schema);
    a case nobody has found yet has no row."""

    case = models.OneToOneField(
        CaseLibrary,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="reuse",
        verbose_name=_("case"),
    )
    l0_hits = models.IntegerField(_("L0 hits"), default=0)
    l1_hits = models.IntegerField(_("L1 hits"), default=0)
    last_hit_at = models.DateTimeField(_("last hit"), null=True, blank=True)
    sessions_useful = models.IntegerField(_("sessions rated useful"), default=0)
    sessions_not_useful = models.IntegerField(_("sessions rated not useful"), default=0)
    stale = models.BooleanField(_("stale"), default=False)

    class Meta:
        db_table = "case_reuse"
        verbose_name = _("case reuse")
        verbose_name_plural = _("case reuse")
        indexes = [models.Index(fields=["stale", "last_hit_at"], name="idx_case_reuse_stale")]

    def __str__(self) -> str:
        return f"{self.case_id}: {self.hits} hits"

    @property
    def hits(self) -> int:
        return self.l0_hits + self.l1_hits

    @property
    def useful_rate(self) -> float | None:
        rated = self.sessions_useful + self.sessions_not_useful
        return self.sessions_useful / rated if rated else None


class CaseIndexState(models.Model):
    """The one row that coordinates the search index: which indexer holds it
    (`building_since`, a lease), the embedding model its vectors are of (`version`),
    when it last indexed and what the findability check found."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    requested_at = models.DateTimeField(null=True, blank=True)
    building_since = models.DateTimeField(null=True, blank=True)
    version = models.CharField(max_length=64, blank=True, default="")
    built_at = models.DateTimeField(null=True, blank=True)
    cases = models.IntegerField(default=0)
    build_seconds = models.FloatField(default=0)
    findability = models.JSONField(null=True, blank=True)
    outcomes_swept_at = models.DateTimeField(null=True, blank=True)
    # The newest AUTO case structured (caselibrary.services.proposals.cases_structure_new); set when
    # the structuring came to a library that had AUTO cases, which are left as they were.
    structured_until = models.DateTimeField(null=True, blank=True)
    installation = models.CharField(max_length=32, blank=True, default="")  # milvus_collection

    class Meta:
        db_table = "case_index_state"
        verbose_name = _("case index state")
        verbose_name_plural = _("case index state")

    def __str__(self) -> str:
        return self.version or "not built"


class CaseStructuring(models.Model):
    """What the automatic structuring proposed for an AUTO case, kept beside it.

    The case itself holds what operators make of it; comparing the two tells how often
    the proposal is kept. A table of its own: case_library mirrors an adopted schema.
    Written by the task worker's structuring pass, seconds after the case is made.
    """

    # No foreign key in the database: case_library may be written by the system it was
    # adopted from (rows deleted there must not fail on this table). The ORM still
    # deletes the proposal with its case; one orphaned elsewhere is left out by the join.
    case = models.OneToOneField(
        CaseLibrary,
        on_delete=models.CASCADE,
        db_constraint=False,
        primary_key=True,
        db_column="case_id",
        related_name="structuring",
        verbose_name=_("case"),
    )
    proposed_category = models.CharField(_("proposed fault category"), max_length=64)
    proposed_error_code = models.CharField(
        _("proposed error code"), max_length=64, null=True, blank=True
    )
    method = models.CharField(_("method"), max_length=32)
    proposed_at = models.DateTimeField(_("proposed at"))

    class Meta:
        db_table = "case_structuring"
        verbose_name = _("case structuring")
        verbose_name_plural = _("case structurings")

    def __str__(self) -> str:
        return f"{self.proposed_category} / {self.proposed_error_code or '-'}"


class CasePassage(models.Model):
    """One searchable part of a case (caselibrary/passages.py), as the indexer wrote it:
    its text, its lexical terms and its embedding.

    Not a foreign key to the case: a case deleted by any path keeps its passages until the
    indexer drops them, and no delete on the case waits for this table.
    """

    id = models.BigAutoField(primary_key=True)
    case_id = models.CharField(_("case id"), max_length=36)
    number = models.PositiveSmallIntegerField(_("passage number"))
    kind = models.CharField(_("kind"), max_length=16)
    text = models.TextField(_("text"))
    # search_text.search_terms(text): what the search engine ranks.
    terms = models.TextField(_("terms"))
    # `terms` as SQLite's FTS5 indexes them: each term a fixed-length key of letters and
    # digits, so the engine's tokenizer neither drops nor splits a term
    # (caselibrary/search_backends/database.py). Empty on MariaDB/MySQL, which rank
    # `terms` in memory.
    lexemes = models.TextField(_("lexemes"))
    # float32 x EMBEDDING_DIM, little-endian, length 1.
    vector = models.BinaryField(_("vector"))
    model = models.CharField(_("embedding model"), max_length=96)

    class Meta:
        db_table = "case_passage"
        verbose_name = _("case passage")
        verbose_name_plural = _("case passages")
        constraints = [
            models.UniqueConstraint(fields=["case_id", "number"], name="uniq_passage_case_number")
        ]
        indexes = [models.Index(fields=["model"], name="idx_passage_model")]

    def __str__(self) -> str:
        return f"{self.case_id}:{self.number}"


class CaseChange(models.Model):
    """A case row that changed and is not indexed yet. Written by database triggers on
    `case_library` (insert, update, delete: every path, SQL included), read and deleted
    by the indexer."""

    seq = models.BigAutoField(primary_key=True)
    case_id = models.CharField(max_length=36)
    changed_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "case_change"
        # The distinct cases waiting, counted up to a bound at each scrape and probe
        # (search_backends/refill.py), read off this index: a few index reads whatever the
        # number of changes (without it, 500,000 changes of 100 cases: 336 ms on MariaDB).
        indexes = [models.Index(fields=["case_id"], name="idx_case_change_case")]

    def __str__(self) -> str:
        return f"{self.seq}: {self.case_id}"


class CaseIndexLog(models.Model):
    """The cases the indexer re-indexed, in the order it did: each serving process reads
    the entries past the last one it applied and reloads those cases' vectors."""

    seq = models.BigAutoField(primary_key=True)
    case_id = models.CharField(max_length=36)
    indexed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "case_index_log"
        indexes = [models.Index(fields=["indexed_at"], name="idx_case_index_log_at")]

    def __str__(self) -> str:
        return f"{self.seq}: {self.case_id}"


class CaseSearchKey(models.Model):
    """An exact (L0) key of a case: one of its error codes or alert names
    ("code:<error_code_key>"), or its normalised title ("title:<text_key>")."""

    id = models.BigAutoField(primary_key=True)
    case_id = models.CharField(max_length=36)
    key = models.CharField(max_length=128)

    class Meta:
        db_table = "case_search_key"
        indexes = [
            models.Index(fields=["key"], name="idx_case_search_key"),
            models.Index(fields=["case_id"], name="idx_case_search_key_case"),
        ]

    def __str__(self) -> str:
        return self.key


class CaseMerge(models.Model):
    """A case merged into an older one: found only through it (its texts and keys are
    indexed as the kept case's). Beside case_library, whose columns mirror the original
    schema."""

    case_id = models.CharField(_("case id"), max_length=36, primary_key=True)
    merged_into = models.CharField(_("merged into"), max_length=36, db_index=True)
    merged_at = models.DateTimeField(_("merged at"), auto_now_add=True)

    class Meta:
        db_table = "case_merge"

    def __str__(self) -> str:
        return f"{self.case_id} -> {self.merged_into}"


class CaseDuplicate(models.Model):
    """A case that says the same thing as an older one, flagged when it was indexed."""

    id = models.BigAutoField(primary_key=True)
    case_id = models.CharField(_("case"), max_length=36)
    similar_id = models.CharField(_("similar older case"), max_length=36)
    similarity = models.FloatField(_("similarity"))
    flagged_at = models.DateTimeField(_("flagged at"), auto_now_add=True)

    class Meta:
        db_table = "case_duplicate"
        verbose_name = _("near-duplicate")
        verbose_name_plural = _("near-duplicates")
        constraints = [
            models.UniqueConstraint(fields=["case_id", "similar_id"], name="uniq_case_duplicate")
        ]
        indexes = [models.Index(fields=["similar_id"], name="idx_case_duplicate_similar")]

    def __str__(self) -> str:
        return f"{self.case_id} ~ {self.similar_id}"


# Kept in a module of its own; imported here so that Django finds it with the app's models.
from caselibrary.import_models import CaseImportSource  # noqa: E402, F401
