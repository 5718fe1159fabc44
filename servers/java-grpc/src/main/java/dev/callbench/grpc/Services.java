package dev.callbench.grpc;

import callbench.v1.AuthGrpc;
import callbench.v1.AuthOuterClass.AuthRequest;
import callbench.v1.AuthOuterClass.AuthResponse;
import callbench.v1.CarsGrpc;
import callbench.v1.CarsOuterClass.CarMessage;
import callbench.v1.EchoGrpc;
import callbench.v1.EchoOuterClass.EchoMessage;
import callbench.v1.LifeGrpc;
import callbench.v1.LifeOuterClass.Board;
import callbench.v1.LifeOuterClass.SetupRequest;
import callbench.v1.LifeOuterClass.StepRequest;
import callbench.v1.StudentsGrpc;
import callbench.v1.StudentsOuterClass.ListStudentsRequest;
import callbench.v1.StudentsOuterClass.ListStudentsResponse;
import dev.callbench.workloads.Cars;
import dev.callbench.workloads.Life;
import dev.callbench.workloads.Students;
import dev.callbench.workloads.UserStore;
import dev.callbench.workloads.WorkloadException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.function.Supplier;

/** The contract's services: each handler converts the message, calls the workload and converts the answer. */
final class Services {
    private Services() {}

    /** One reply, or the workload's refusal as its gRPC status. */
    private static <T> void answer(StreamObserver<T> reply, Supplier<T> call) {
        T message;
        try {
            message = call.get();
        } catch (WorkloadException e) {
            reply.onError(status(e));
            return;
        }
        reply.onNext(message);
        reply.onCompleted();
    }

    /** The workload's refusal as its gRPC status. */
    static StatusRuntimeException status(WorkloadException e) {
        return Status.fromCodeValue(e.kind().grpcCode()).withDescription(e.getMessage()).asRuntimeException();
    }

    static final class AuthService extends AuthGrpc.AuthImplBase {
        private final UserStore users;

        AuthService(UserStore users) {
            this.users = users;
        }

        @Override
        public void test(AuthRequest request, StreamObserver<AuthResponse> reply) {
            answer(reply, () -> AuthResponse.newBuilder()
                    .setHash(users.test(request.getId(), request.getPassword()).hash())
                    .build());
        }
    }

    static final class StudentsService extends StudentsGrpc.StudentsImplBase {
        @Override
        public void list(ListStudentsRequest request, StreamObserver<ListStudentsResponse> reply) {
            answer(reply, () -> Convert.students(Students.list()));
        }
    }

    static final class CarsService extends CarsGrpc.CarsImplBase {
        /** The reply is the request itself, once validated: the workload returns it unchanged. */
        @Override
        public void send(CarMessage request, StreamObserver<CarMessage> reply) {
            answer(reply, () -> {
                Cars.send(Convert.car(request));
                return request;
            });
        }
    }

    static final class LifeService extends LifeGrpc.LifeImplBase {
        @Override
        public void setup(SetupRequest request, StreamObserver<Board> reply) {
            answer(reply, () -> Convert.board(Life.setup()));
        }

        @Override
        public void step(StepRequest request, StreamObserver<Board> reply) {
            answer(reply, () -> Convert.board(Life.step(Convert.cells(request.getBoardList()), request.getNtimes())));
        }
    }

    static final class EchoService extends EchoGrpc.EchoImplBase {
        /** The reply is the request itself, once checked (an unknown kind number is INVALID_ARGUMENT). */
        @Override
        public void echo(EchoMessage request, StreamObserver<EchoMessage> reply) {
            answer(reply, () -> {
                Convert.checkEcho(request);
                return request;
            });
        }
    }
}
