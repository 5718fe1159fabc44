"""The records workload, for streaming calls: an upload's summary, and the records a download sends.

Records are echo's, valid as echo checks them (`echo.validate_record`); a conversation answers each message as
echo does. The REST upload's NDJSON reading is upload.py.
"""

import re
from dataclasses import asdict, dataclass

from . import echo
from .errors import WorkloadError
from .limits import MAX_DOWNLOAD

# A download's `count` in a query string: a decimal integer, nothing else (no sign but "-", no spaces or "_").
_DECIMAL = re.compile(r"-?[0-9]+")


@dataclass
class UploadSummary:
    """The answer to an upload (proto field names; REST writes them in lowerCamelCase)."""

    count: int = 0
    active_count: int = 0
    first_id: int = 0
    last_id: int = 0
    sample_count: int = 0

    def add(self, record) -> None:
        """Adds one record (an object with the proto's field names), refused as echo refuses it."""
        echo.validate_record(record, f"record {self.count}")
        if self.count == 0:
            self.first_id = record.id
        self.count += 1
        self.active_count += bool(record.active)
        self.last_id = record.id
        self.sample_count += len(record.samples)

    @classmethod
    def of(cls, records) -> "UploadSummary":
        summary = cls()
        for record in records:
            summary.add(record)
        return summary

    def fields(self) -> dict[str, int]:
        return asdict(self)


def download_count(count: int) -> int:
    """Checks a download's `count`: 0..MAX_DOWNLOAD."""
    if not 0 <= count <= MAX_DOWNLOAD:
        raise WorkloadError.invalid(f"count must be in 0..{MAX_DOWNLOAD}, got {count}")
    return count


def count_param(value: str | None) -> int:
    """The `count` query parameter (None when absent): required, a decimal integer in 0..MAX_DOWNLOAD."""
    if value is None:
        raise WorkloadError.invalid("the query parameter count is required")
    if not _DECIMAL.fullmatch(value):
        raise WorkloadError.invalid(f"count must be a decimal integer, got {value!r}")
    digits = value.removeprefix("-").lstrip("0")
    if len(digits) > len(str(MAX_DOWNLOAD)):
        # Out of range however long it is (int() refuses strings of thousands of digits).
        raise WorkloadError.invalid(f"count must be in 0..{MAX_DOWNLOAD}, got {value}")
    return download_count(int(value))


def downloaded(i: int) -> dict:
    """Record `i` (from 0) of a download, with the proto's field names and the kind by name."""
    return {
        "id": i + 1,
        "name": f"record-{i:06}",
        "score": i / 2,
        "active": i % 2 == 0,
        "kind": echo.KINDS[1 + i % 3],
        "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65},
        "tags": ["alpha", "beta"],
        "samples": [i, i + 1, i + 2],
    }
