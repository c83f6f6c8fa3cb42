"""Column types the original MySQL schema needs and Django has no portable name for."""

import uuid

from django.db import models

# MySQL's default collations compare case-insensitively; identifiers do not.
MYSQL_BINARY_COLLATION = "utf8mb4_bin"


class IdentifierField(models.CharField):
    """VARCHAR for external identifiers (sessionId, invocationId).

    Compared byte for byte on MySQL/MariaDB, as SQLite does, so `abc` and `ABC` are two
    sessions on every backend. Foreign keys to it inherit the collation.
    """

    def db_parameters(self, connection):  # type: ignore[no-untyped-def]
        params = super().db_parameters(connection)
        if connection.vendor == "mysql" and not self.db_collation:
            params["collation"] = MYSQL_BINARY_COLLATION
        return params


def new_uuid_string() -> str:
    return str(uuid.uuid4())


class UUIDStringField(models.CharField):
    """CHAR(36) holding a canonical UUID string.

    Django's UUIDField becomes MariaDB's native `uuid` type (10.7+) and char(32) on
    MySQL; the original schema has CHAR(36) with hyphens.
    """

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["max_length"] = 36
        super().__init__(*args, **kwargs)

    def deconstruct(self):  # type: ignore[no-untyped-def]
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("max_length", None)
        return name, path, args, kwargs

    def db_type(self, connection) -> str:  # type: ignore[no-untyped-def]
        return "char(36)"
