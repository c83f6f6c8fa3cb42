"""A page as an operator reads it: its markup on one line, runs of white space as one space."""


def text(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(response.content.decode().split())
