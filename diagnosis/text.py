"""Text from outside as the service keeps it and shows it.

Unicode's bidirectional embedding, override and isolate controls (U+202A-U+202E,
U+2066-U+2069) change the order a text is shown in, not what it says: "yltnenamrep"
after a RIGHT-TO-LEFT OVERRIDE shows as "permanently", and a title ending in an unclosed
override reverses whatever a page writes after it. Every free text that comes in (a
question, an answer, a user id, a reader's comment or correction, a case's texts, a tool
call's query or error, what an OTLP span carries) is stored without them
(`without_bidi_controls`), so that what an operator reads is what is stored. The
left-to-right and right-to-left marks (U+200E, U+200F) are kept: they set the direction of
neutral characters in mixed text and reorder nothing else. Identifiers (session ids,
invocation ids) are kept as sent: a session id of such characters is refused by its
rule.

A message the service writes around a stored text (an admin message, a history entry)
puts the text in an isolate (`isolated`), so that a text stored by an earlier release,
controls and all, cannot reorder the words around it.
"""

from typing import TypeVar

T = TypeVar("T")

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NO_BIDI_CONTROLS = str.maketrans("", "", BIDI_CONTROLS)

FIRST_STRONG_ISOLATE = "\u2068"
POP_DIRECTIONAL_ISOLATE = "\u2069"


def without_bidi_controls(value: T) -> T:
    """`value` without bidirectional embedding, override and isolate controls; anything
    but a string is left as it is, for the checks to name."""
    if isinstance(value, str) and not value.isascii():
        return value.translate(_NO_BIDI_CONTROLS)  # type: ignore[return-value]
    return value


def isolated(text: object) -> str:
    """`text` (its str) without bidirectional controls, in a first-strong isolate: shown
    in its own direction, without reordering the sentence it is written into."""
    return f"{FIRST_STRONG_ISOLATE}{without_bidi_controls(str(text))}{POP_DIRECTIONAL_ISOLATE}"
