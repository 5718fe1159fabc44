"""The contract's services (contract/proto/callbench/v1): convert, call the workload, convert back."""

import grpc

from callbench.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    cars_pb2,
    cars_pb2_grpc,
    echo_pb2,
    echo_pb2_grpc,
    life_pb2,
    life_pb2_grpc,
    records_pb2,
    records_pb2_grpc,
    students_pb2,
    students_pb2_grpc,
)
from callbench_shared import cars, echo, life, students
from callbench_shared.auth import UserStore

from .errors import workload_errors
from .records import Records

# Every callbench.v1 service's full name, for health and reflection.
SERVICE_NAMES = tuple(
    service.full_name
    for module in (auth_pb2, students_pb2, cars_pb2, life_pb2, echo_pb2, records_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
)


class Auth(auth_pb2_grpc.AuthServicer):
    def __init__(self, users: UserStore) -> None:
        self.users = users

    @workload_errors
    def Test(self, request):
        # Inline even in per-request mode (file read per call): the process measured is the one serving.
        return auth_pb2.AuthResponse(hash=self.users.test(request.id, request.password))


class Students(students_pb2_grpc.StudentsServicer):
    @workload_errors
    def List(self, request):
        return students_pb2.ListStudentsResponse(students=students.list_students())


class Cars(cars_pb2_grpc.CarsServicer):
    @workload_errors
    def Send(self, request):
        car = request.car if request.HasField("car") else None
        driver = request.driver if request.HasField("driver") else None
        cars.validate(car, driver)
        return request


class Life(life_pb2_grpc.LifeServicer):
    @workload_errors
    def Setup(self, request):
        return board(life.setup())

    @workload_errors
    def Step(self, request):
        return board(life.step([(cell.x, cell.y) for cell in request.board], request.ntimes))


class Echo(echo_pb2_grpc.EchoServicer):
    @workload_errors
    def Echo(self, request):
        # Finite numbers and a known kind (proto3 enums are open: an unknown number decodes, echo refuses it).
        echo.validate(request.records)
        return request


def board(cells: list[tuple[int, int]]) -> life_pb2.Board:
    return life_pb2.Board(board=[life_pb2.Cell(x=x, y=y) for x, y in cells])


def add_services(server: grpc.aio.Server, users: UserStore) -> None:
    auth_pb2_grpc.add_AuthServicer_to_server(Auth(users), server)
    students_pb2_grpc.add_StudentsServicer_to_server(Students(), server)
    cars_pb2_grpc.add_CarsServicer_to_server(Cars(), server)
    life_pb2_grpc.add_LifeServicer_to_server(Life(), server)
    echo_pb2_grpc.add_EchoServicer_to_server(Echo(), server)
    records_pb2_grpc.add_RecordsServicer_to_server(Records(), server)
