"""What the Milvus backend may say of a failure: the server's address without the user
and password someone may have written into MILVUS_URI, and the client's messages with
every credential taken out (pymilvus puts the whole URI into some of its errors, such as
"uri: root:secret@host:19530 is illegal"). And whether an error came from the client at
all: whatever it raises fails the call, which the search answers without the index; an
error of this project's own code is no outage and goes on up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import TracebackType

# The packages of the Milvus client: pymilvus, the gRPC it calls, and Milvus Lite, which
# pymilvus starts for a local file.
CLIENT_PACKAGES = frozenset({"pymilvus", "grpc", "milvus_lite"})

HIDDEN = "***"

# user:password@ or user@ right after a scheme, in any URL a message holds.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@\[\]]*@")


def server_address(uri: str) -> str:
    """`uri` as a message shows it: the scheme, host and port only. Reads anything,
    a URI without a scheme or one urllib cannot read included, without raising."""
    scheme, separator, rest = uri.partition("://")
    if not separator:
        scheme, rest = "", uri
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    return f"{scheme}://{host}" if separator else host


def secrets_of(uri: str, token: str) -> list[str]:
    """The credentials `uri` and `token` carry, longest first: the user and password of
    the URI, the token, and the token's password when it is "user:password"."""
    rest = uri.partition("://")[2] or uri
    userinfo = rest.split("/", 1)[0].rpartition("@")[0]
    found = {userinfo, userinfo.partition(":")[2], token, token.partition(":")[2]}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def redacted(text: str, *, uris: Sequence[str], token: str) -> str:
    """`text` with each of `uris` shown as server_address() shows it, and no credential of
    theirs or of `token` left."""
    for uri in uris:
        if uri:
            text = text.replace(uri, server_address(uri))
    text = _USERINFO.sub(r"\g<scheme>", text)
    for uri in uris:
        for secret in secrets_of(uri, token):
            text = text.replace(secret, HIDDEN)
    return text


def raised_by_client(exc: BaseException) -> bool:
    """Whether `exc` was raised while the Milvus client ran: some frame of its traceback
    is the client's (a ValueError of urllib called by pymilvus counts, one raised by this
    project's code around the call does not)."""
    frame: TracebackType | None = exc.__traceback__
    while frame is not None:
        module = frame.tb_frame.f_globals.get("__name__", "")
        if module.partition(".")[0] in CLIENT_PACKAGES:
            return True
        frame = frame.tb_next
    return False
