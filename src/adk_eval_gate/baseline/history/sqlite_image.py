"""An in-memory SQLite database to and from the bytes of its file, on every Python the package supports.

`Connection.serialize` / `deserialize` came with Python 3.11; on 3.10 the bytes pass through a private temporary
file and SQLite's online backup (which copies pages, running nothing the file's schema defines). The store's file
is the same either way: SQLite's own file format.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile

NATIVE = sys.version_info >= (3, 11)  # tests turn it off to run the 3.10 path on a newer Python


def image_of(connection: sqlite3.Connection) -> bytes:
    """The database as the bytes of its file."""
    serialize = getattr(connection, "serialize", None)
    if NATIVE and serialize is not None:
        return bytes(serialize())
    with tempfile.TemporaryDirectory(prefix="adk-eval-gate-history-") as folder:
        path = os.path.join(folder, "history.db")
        target = sqlite3.connect(path, isolation_level=None)
        try:
            connection.backup(target)
        finally:
            target.close()
        with open(path, "rb") as handle:
            return handle.read()


def load_image(connection: sqlite3.Connection, data: bytes) -> None:
    """`connection` (in memory, empty) becomes the database `data` holds; sqlite3.DatabaseError when it is not one."""
    deserialize = getattr(connection, "deserialize", None)
    if NATIVE and deserialize is not None:
        deserialize(data)
        return
    with tempfile.TemporaryDirectory(prefix="adk-eval-gate-history-") as folder:
        path = os.path.join(folder, "history.db")
        with open(path, "wb") as handle:
            handle.write(data)
        source = sqlite3.connect(path, isolation_level=None)
        try:
            source.execute("PRAGMA trusted_schema = OFF")
            source.backup(connection)
        finally:
            source.close()
