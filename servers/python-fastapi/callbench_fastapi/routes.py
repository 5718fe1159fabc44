"""The contract's routes (contract/openapi.yaml): each handler calls its workload inline.

Handlers are `async def` and call the workloads on the event loop, as the Rust servers run them on their workers:
the processes measured are the ones serving (per-request auth and long life steps block the loop while they run).
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request

from callbench_shared import cars, echo, life, students
from callbench_shared.auth import UserStore

from .json_route import JsonRoute
from .models import (
    AuthRequest,
    AuthResponse,
    Board,
    CarMessage,
    EchoMessage,
    HealthCheckResponse,
    ListStudentsResponse,
    StepRequest,
)

router = APIRouter(route_class=JsonRoute)


async def user_store(request: Request) -> UserStore:  # async: FastAPI would run a def in a thread
    return request.app.state.users


UserId = Annotated[int, Path(ge=-(2**63), le=2**63 - 1)]  # int64; not an integer is 400


@router.put("/auth/{id}")
async def auth(id: UserId, body: AuthRequest, users: Annotated[UserStore, Depends(user_store)]) -> AuthResponse:
    return AuthResponse(hash=users.test(id, body.password))


@router.get("/students")
async def list_students() -> ListStudentsResponse:
    # pydantic validates the dicts into Students.
    return ListStudentsResponse(students=students.list_students())  # type: ignore[arg-type]


@router.post("/cars")
async def send_car(message: CarMessage) -> CarMessage:
    cars.validate(message.car, message.driver)
    return message


@router.get("/life/setup")
async def life_setup() -> Board:
    return Board(board=life.setup())


@router.post("/life/step")
async def life_step(request: StepRequest) -> Board:
    return Board(board=life.step(request.board, request.ntimes))


# A record's absent location stays absent (not null) in the reply.
@router.post("/echo", response_model_exclude_none=True)
async def echo_message(message: EchoMessage) -> EchoMessage:
    echo.validate(message.records)
    return message


@router.get("/health")
async def health() -> HealthCheckResponse:
    return HealthCheckResponse(status="SERVING")
