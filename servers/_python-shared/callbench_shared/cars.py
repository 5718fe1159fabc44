"""Seed 003's cars workload: validate the car + driver message; the server then echoes it."""

from .errors import WorkloadError
from .limits import MAX_CAR_YEAR, MAX_MILEAGE, MAX_STRING_BYTES, MIN_CAR_YEAR


def validate(car, driver) -> None:
    """Checks a message's `car` and `driver` (None when absent): objects with the proto's field names."""
    if car is None:
        raise WorkloadError.invalid("car is required")
    if driver is None:
        raise WorkloadError.invalid("driver is required")
    if not car.make or not car.model:
        raise WorkloadError.invalid("car.make and car.model are required")
    strings = (car.make, car.model, car.trim, car.color, driver.firstname, driver.lastname, driver.driver_id)
    if any(len(s.encode()) > MAX_STRING_BYTES for s in strings):
        raise WorkloadError.invalid(f"strings are limited to {MAX_STRING_BYTES} bytes")
    if not MIN_CAR_YEAR <= car.year <= MAX_CAR_YEAR:
        raise WorkloadError.invalid(f"car.year must be in {MIN_CAR_YEAR}..{MAX_CAR_YEAR}")
    if car.mileage > MAX_MILEAGE:
        raise WorkloadError.invalid(f"car.mileage must be at most {MAX_MILEAGE}")
