"""The echo workload for payload sweeps: records of mixed field types, returned as sent."""

from math import isfinite

from .errors import WorkloadError

# The names of callbench.v1.Kind, by enum number.
KINDS = ("KIND_UNSPECIFIED", "KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE")


def validate(records) -> None:
    """Checks every record of a message (`validate_record`); records are objects with the proto's field names."""
    for i, record in enumerate(records):
        validate_record(record, f"records[{i}]")


def validate_record(record, where: str) -> None:
    """Checks one record, named `where` in the error: a known kind and finite numbers.

    A protobuf record's kind is its enum number, and proto3 enums are open (an unknown number decodes), so the
    number is checked here; a REST model's kind is one of the names already, refused by its parser otherwise.
    """
    kind = record.kind
    if isinstance(kind, int) and not 0 <= kind < len(KINDS):
        raise WorkloadError.invalid(f"{where}.kind: unknown value {kind}")
    location = record.location
    location_finite = location is None or (isfinite(location.latitude) and isfinite(location.longitude))
    if not isfinite(record.score) or not location_finite:
        raise WorkloadError.invalid(f"{where}: numbers must be finite")
