"""The contract's REST bodies (contract/openapi.yaml) as pydantic models.

Types are strict where JSON has them (a string is not a number, a float not an int, a bool not either), the
integer fields keep their proto ranges (uint32, int64) and a Cell is the pair [x, y]. Names are the proto3 JSON
ones (lowerCamelCase), the proto names are accepted too, as proto3 JSON parsers do; unknown fields are ignored.
"""

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

# StrictFloat takes JSON integers too (3 is a valid double), as serde and proto3 JSON do.
U32 = Annotated[StrictInt, Field(ge=0, le=2**32 - 1)]
I64 = Annotated[StrictInt, Field(ge=-(2**63), le=2**63 - 1)]
Cell = tuple[StrictInt, StrictInt]


class Message(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)


# auth.proto
class AuthRequest(Message):
    password: StrictStr  # required in REST; the id is the path parameter


class AuthResponse(Message):
    hash: str


# students.proto (replies only)
class Address(Message):
    street: str = ""
    city: str = ""
    state: str = ""
    postal_code: str = ""
    country: str = ""


class Student(Message):
    id: int = 0
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    age: int = 0
    gpa: float = 0.0
    enrolled: bool = False
    major: str = ""
    courses: list[str] = []
    address: Address | None = None
    enrollment_date: str = ""
    phone: str = ""


class ListStudentsResponse(Message):
    students: list[Student] = []


# cars.proto
class Car(Message):
    make: StrictStr = ""
    model: StrictStr = ""
    trim: StrictStr = ""
    color: StrictStr = ""
    year: U32 = 0
    mileage: U32 = 0


class Driver(Message):
    firstname: StrictStr = ""
    lastname: StrictStr = ""
    driver_id: StrictStr = ""


class CarMessage(Message):
    # Absent or null: the workload answers 400 (car and driver are required).
    car: Car | None = None
    driver: Driver | None = None


# life.proto
class StepRequest(Message):
    ntimes: U32
    board: list[Cell]


class Board(Message):
    board: list[Cell] = []


# echo.proto
class Kind(StrEnum):
    KIND_UNSPECIFIED = "KIND_UNSPECIFIED"
    KIND_SMALL = "KIND_SMALL"
    KIND_MEDIUM = "KIND_MEDIUM"
    KIND_LARGE = "KIND_LARGE"


class Location(Message):
    city: StrictStr = ""
    latitude: StrictFloat = 0.0
    longitude: StrictFloat = 0.0


class Record(Message):
    id: I64 = 0
    name: StrictStr = ""
    score: StrictFloat = 0.0
    active: StrictBool = False
    kind: Kind = Kind.KIND_UNSPECIFIED
    location: Location | None = None
    tags: list[StrictStr] = []
    samples: list[I64] = []


class EchoMessage(Message):
    records: list[Record]  # required in REST requests


# records.proto (the upload's answer; its requests are EchoMessage and Record lines)
class UploadSummary(Message):
    count: int = 0
    active_count: int = 0
    first_id: int = 0
    last_id: int = 0
    sample_count: int = 0


class HealthCheckResponse(Message):
    status: str
