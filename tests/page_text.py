"""A page as an operator reads it: its markup on one line, runs of white space as one space
(or its words alone)."""

import re


def text(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(response.content.decode().split())


def visible_text(response) -> str:  # type: ignore[no-untyped-def]
    """The page's words alone: its tags taken out, runs of white space as one space."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())
