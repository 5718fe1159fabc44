"""The echo workload for payload sweeps: records of mixed field types, returned as sent."""

from math import isfinite

from .errors import WorkloadError

# The names of callbench.v1.Kind, by enum number.
KINDS = ("KIND_UNSPECIFIED", "KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE")


def validate(records) -> None:
    """Checks that every number is finite; records are objects with the proto's field names."""
    for i, record in enumerate(records):
        location = record.location
        location_finite = location is None or (isfinite(location.latitude) and isfinite(location.longitude))
        if not isfinite(record.score) or not location_finite:
            raise WorkloadError.invalid(f"records[{i}]: numbers must be finite")
