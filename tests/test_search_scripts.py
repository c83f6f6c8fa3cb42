"""Words of every script are search terms: Cyrillic, Greek, Korean, Japanese kana and the
letters of Indic scripts whole; accented Latin folded to its plain letters, so "café" and
"cafe" are one term. Chinese, English words, names and error codes are cut as before."""

import pytest

from caselibrary.models import CaseChange, CaseSearchKey
from caselibrary.search_engine import unknown_names
from caselibrary.search_text import normalise_text, search_terms, text_key, text_words
from caselibrary.services.index import case_index_build
from caselibrary.services.index_pass import case_index_pending
from tests.factories import CaseLibraryFactory
from tests.migrate_to import migrate_to

URL = "/api/cases/search"
BEFORE = [("caselibrary", "0014_reindex_for_identifier_parts")]
UPGRADE = [("caselibrary", "0015_terms_of_every_script")]
EMPTY_TITLE_KEY = f"title:{text_key('')}"


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Ошибка диска", "ошибка диска"),
        ("Настройка журнала ёмкость", "настройка журнала ёмкость"),  # й and ё kept
        ("Σφάλμα δίσκου", "σφάλμα δίσκου"),  # Greek keeps its accents
        ("디스크 용량 부족", "디스크 용량 부족"),  # Hangul syllables, not jamo
        ("त्रुटि डिस्क", "त्रुटि डिस्क"),  # vowel signs and virama inside the word
        ("ошибка-диска", "ошибка диска ошибка-диска"),  # a joined name: parts and whole
    ],
)
def test_letters_of_any_script_make_words(text: str, terms: str) -> None:
    assert search_terms(text) == terms


@pytest.mark.parametrize(
    ("accented", "plain"),
    [
        ("café", "cafe"),
        ("résumé", "resume"),
        ("naïve", "naive"),
        ("Größe überschritten", "grosse uberschritten"),
        ("Zeitüberschreitung", "zeituberschreitung"),
        ("İstanbul", "istanbul"),
    ],
)
def test_accented_latin_is_one_term_with_its_plain_spelling(accented: str, plain: str) -> None:
    assert search_terms(accented) == plain
    assert search_terms(plain) == plain


def test_a_decomposed_accent_is_the_same_term_as_a_composed_one() -> None:
    assert search_terms("cafe\u0301") == search_terms("caf\u00e9") == "cafe"


def test_japanese_kana_runs_are_words_and_kanji_are_cut_as_chinese() -> None:
    # の and が are one kana each: too short to be a term.
    terms = search_terms("ディスクの容量が不足しています").split()

    assert terms == ["ディスク", "容量", "不足", "しています"]
    assert search_terms("ﾃﾞｨｽｸ") == "ディスク"  # half-width katakana is the same word


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        (
            "MySQL 锁等待超时导致下单失败，ERROR 1205 on payment-gateway",
            "#error_1205 mysql 锁 等待 超时 下单 失败 payment gateway payment-gateway",
        ),
        (
            "replica Seconds_Behind_Master keeps growing; ORA-01555 snapshot too old",
            "#ora-01555 replica second behind master seconds_behind_master growing ora "
            "ora-01555 snapshot old",
        ),
        (
            "Kafka消费延迟持续增长，consumer lag 很高",
            "kafka 消费 延迟 持续 增长 持续增长 consumer lag 高",
        ),
        (
            "订单库锁 java.lang.OutOfMemoryError HighCPUUsage",
            "#outofmemoryerror #highcpuusage 订单 库 锁 java lang outofmemoryerror "
            "java.lang.outofmemoryerror highcpuusage",
        ),
    ],
)
def test_chinese_english_names_and_codes_are_cut_as_before(text: str, terms: str) -> None:
    assert search_terms(text) == terms


def test_a_title_of_any_script_has_a_key_of_its_own() -> None:
    assert normalise_text("Ошибка диска!") == "ошибкадиска"
    assert text_key("Ошибка диска") != text_key("Ошибка сети") != text_key("")
    assert normalise_text("Größe überschritten") == normalise_text("grosse uberschritten")
    assert normalise_text("MySQL 锁等待超时，ERROR 1205") == "mysql锁等待超时error1205"


def _first_hit(api, query: str) -> tuple[str, str | None]:  # type: ignore[no-untyped-def]
    body = api.post(URL, {"query": query}, format="json").json()
    return body["matchLevel"], body["hits"][0]["caseId"] if body["hits"] else None


@pytest.mark.django_db
def test_a_question_in_cyrillic_finds_the_case_of_that_title(api) -> None:  # type: ignore[no-untyped-def]
    disk = CaseLibraryFactory(
        title="ошибка диска",
        error_code=None,
        root_cause="Диск переполнен журналами приложения.",
        solution="1. Очистить журналы\n2. Увеличить диск",
    )
    CaseLibraryFactory(
        title="ошибка сети",
        error_code=None,
        root_cause="Сетевой интерфейс теряет пакеты.",
        solution="Заменить кабель",
    )
    case_index_build()

    assert _first_hit(api, "ошибка диска") == ("L0", disk.case_id)
    assert _first_hit(api, "Ошибка диска?") == ("L0", disk.case_id)


@pytest.mark.django_db
def test_a_question_without_its_accents_finds_the_accented_title(api) -> None:  # type: ignore[no-untyped-def]
    size = CaseLibraryFactory(
        title="Größe überschritten",
        error_code=None,
        root_cause="Die Datei ist größer als erlaubt.",
        solution="Grenze erhöhen",
    )
    case_index_build()

    assert _first_hit(api, "Grosse uberschritten") == ("L0", size.case_id)


def test_an_ascii_name_no_case_mentions_is_still_unknown() -> None:
    def known_terms(terms: list[str]) -> set[str]:
        return set(terms) & {"kafka", "lag", "ошибка", "cafe"}

    assert unknown_names("MongoDB и Kafka: ошибка", known_terms) == ["MongoDB"]
    # A capitalised word of another script is no name: the rule reads ASCII words only.
    assert unknown_names("Ошибка Kafka lag", known_terms) == []


@pytest.mark.django_db(transaction=True)
def test_upgrading_queues_every_case_drops_the_empty_title_key_and_embeds_nothing(api) -> None:  # type: ignore[no-untyped-def]
    disk = CaseLibraryFactory(title="ошибка диска", error_code=None)
    other = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    case_index_build()
    # As the tokenizer before left them: the Cyrillic title keyed as the empty title, and
    # a deleted case's key behind.
    CaseSearchKey.objects.filter(case_id=disk.case_id).delete()
    CaseSearchKey.objects.bulk_create(
        [CaseSearchKey(case_id=case_id, key=EMPTY_TITLE_KEY) for case_id in (disk.case_id, "gone")]
    )
    migrate_to(*BEFORE)

    try:
        migrate_to(*UPGRADE)
        queued = set(CaseChange.objects.values_list("case_id", flat=True))
        empty_keys = CaseSearchKey.objects.filter(key=EMPTY_TITLE_KEY).count()
        run = case_index_pending()
    finally:
        migrate_to()

    assert queued == {disk.case_id, other.case_id}
    assert empty_keys == 0
    assert (run.cases, run.embedded) == (2, 0)
    assert _first_hit(api, "ошибка диска") == ("L0", disk.case_id)
    assert not CaseSearchKey.objects.filter(case_id="gone").exists()


def test_the_words_of_a_text_are_whole_words_of_any_script() -> None:
    assert text_words("Zeitüberschreitung am Café-Server: MongoDB 连接超时 ディスク") == [
        "Zeitüberschreitung",
        "am",
        "Café-Server",
        "MongoDB",
    ]


def test_a_capitalised_word_with_accents_is_no_name_nor_is_its_ascii_start() -> None:
    held = set(search_terms("Zeitüberschreitung beim Café-Server, Datenbankgröße voll").split())

    def known_terms(terms: list[str]) -> set[str]:
        return set(terms) & held

    assert unknown_names("Zeitüberschreitung am Café-Server", known_terms) == []
    assert unknown_names("Datenbankgröße voll", known_terms) == []
    assert unknown_names("Datenbankgröße voll, MongoDB", known_terms) == ["MongoDB"]
