"""The users callbench's locust cells run: one call of the cell's workload in a loop, over
locust's HttpUser (requests), FastHttpUser (geventhttpclient) or a gRPC user made as locust's
documentation shows (a channel with an interceptor that fires locust's request event).

The call comes from the environment the runner sets: CALLBENCH_METHOD, CALLBENCH_PATH,
CALLBENCH_BODY (a file), CALLBENCH_ACCEPT_ENCODING; for gRPC CALLBENCH_GRPC_METHOD
(`package.Service/Method`), CALLBENCH_GRPC_MESSAGE (a file of the encoded request) and
CALLBENCH_PROTOSET (the contract's FileDescriptorSet); CALLBENCH_RATE (calls/s per user) when the
cell has a rate."""

import os
import time

import grpc
import grpc.experimental.gevent as grpc_gevent
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from locust import FastHttpUser, HttpUser, User, constant, constant_throughput, task

grpc_gevent.init_gevent()  # grpcio's blocking calls must yield to locust's other users

METHOD = os.environ.get("CALLBENCH_METHOD", "GET")
PATH = os.environ.get("CALLBENCH_PATH", "/")
BODY = open(os.environ["CALLBENCH_BODY"], "rb").read() if os.environ.get("CALLBENCH_BODY") else None
HEADERS = {"Accept-Encoding": os.environ.get("CALLBENCH_ACCEPT_ENCODING", "identity")}
if BODY is not None:
    HEADERS["Content-Type"] = "application/json"
RATE = float(os.environ["CALLBENCH_RATE"]) if os.environ.get("CALLBENCH_RATE") else None


def pacing():
    return constant_throughput(RATE) if RATE else constant(0)


class HttpCaller(HttpUser):
    wait_time = pacing()

    @task
    def call(self):
        self.client.request(METHOD, PATH, data=BODY, headers=HEADERS)


class FastHttpCaller(FastHttpUser):
    wait_time = pacing()

    @task
    def call(self):
        self.client.request(METHOD, PATH, data=BODY, headers=HEADERS)


def grpc_method():
    """The request and response classes of the cell's method, made from the descriptor set."""
    files = descriptor_pb2.FileDescriptorSet.FromString(open(os.environ["CALLBENCH_PROTOSET"], "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    service, method = os.environ["CALLBENCH_GRPC_METHOD"].split("/")
    m = pool.FindServiceByName(service).FindMethodByName(method)
    return message_factory.GetMessageClass(m.input_type), message_factory.GetMessageClass(m.output_type)


class LocustInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Times each call and reports it to locust, as locust's gRPC example does."""

    def __init__(self, environment):
        self.environment = environment

    def intercept_unary_unary(self, continuation, details, request):
        started = time.perf_counter()
        response, exception, length = None, None, 0
        try:
            response = continuation(details, request)
            length = response.result().ByteSize()
        except grpc.RpcError as e:
            exception = e
        self.environment.events.request.fire(
            request_type="grpc",
            name=details.method,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=length,
            response=response,
            context=None,
            exception=exception,
        )
        return response


class GrpcCaller(User):
    wait_time = pacing()

    def __init__(self, environment):
        super().__init__(environment)
        request_class, response_class = grpc_method()
        self.request = request_class.FromString(open(os.environ["CALLBENCH_GRPC_MESSAGE"], "rb").read())
        target = self.host.split("://", 1)[-1]
        channel = grpc.intercept_channel(grpc.insecure_channel(target), LocustInterceptor(environment))
        self.call_method = channel.unary_unary(
            "/" + os.environ["CALLBENCH_GRPC_METHOD"],
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )

    @task
    def call(self):
        self.call_method(self.request)
