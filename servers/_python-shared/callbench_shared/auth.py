"""Seed 000's auth workload: find the user by id, SHA-512 hex of the password."""

import hashlib
import json
from enum import StrEnum
from pathlib import Path

from .errors import WorkloadError
from .limits import MAX_PASSWORD_BYTES


class Mode(StrEnum):
    """How a server finds users."""

    # users.json parsed once at start into a dict (the default)
    PRELOADED = "preloaded"
    # users.json read, parsed and searched linearly on every call: what seed 000 measured
    PER_REQUEST = "per-request"


class UserStore:
    def __init__(self, path: str | Path, mode: Mode) -> None:
        """Opens the store; reads the file now in both modes, so a bad file fails at start, not on a call."""
        self.path = Path(path)
        self.mode = Mode(mode)
        users = read_users(self.path)
        self._hashes = {user["id"]: user["hash"] for user in users} if self.mode is Mode.PRELOADED else None

    def test(self, user_id: int, password: str) -> str:
        """The auth call: the hash, NOT_FOUND for an unknown id, INVALID_ARGUMENT for a bad password."""
        data = check_password(password)
        if self._hashes is not None:
            found = user_id in self._hashes
        else:
            try:
                users = read_users(self.path)
            except (OSError, ValueError) as e:
                raise WorkloadError.internal(f"cannot read users: {e}") from e
            found = any(user["id"] == user_id for user in users)
        if not found:
            raise WorkloadError.not_found(f"no user with id {user_id}")
        return hashlib.sha512(data).hexdigest()


def read_users(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return json.load(f)


def check_password(password: str) -> bytes:
    """The password's UTF-8 bytes, once they are known to be 1..MAX_PASSWORD_BYTES long."""
    data = password.encode()
    if not data:
        raise WorkloadError.invalid("password must not be empty")
    if len(data) > MAX_PASSWORD_BYTES:
        raise WorkloadError.invalid(f"password is longer than {MAX_PASSWORD_BYTES} bytes")
    return data


def sha512_hex(text: str) -> str:
    """Lowercase hex SHA-512 of the text's UTF-8 bytes."""
    return hashlib.sha512(text.encode()).hexdigest()
