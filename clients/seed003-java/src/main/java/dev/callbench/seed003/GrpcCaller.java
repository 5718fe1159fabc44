package dev.callbench.seed003;

import callbench.v1.CarsGrpc;
import callbench.v1.CarsOuterClass.CarMessage;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * The article's gRPC client: a grpc-java channel in plaintext (the article's servers had no TLS) and
 * a blocking stub, one call after another on the channel's one connection.
 */
final class GrpcCaller implements Main.Caller {
    private final ManagedChannel channel;
    private final CarsGrpc.CarsBlockingStub stub;

    GrpcCaller(String target) {
        String address = target.replaceFirst("^grpc://", "");
        channel = ManagedChannelBuilder.forTarget(address).usePlaintext().build();
        stub = CarsGrpc.newBlockingStub(channel);
    }

    @Override
    public boolean call(Cars.Car car) {
        CarMessage request = toProto(car);
        return stub.send(request).equals(request);
    }

    static CarMessage toProto(Cars.Car c) {
        return CarMessage.newBuilder()
                .setCar(CarMessage.Car.newBuilder()
                        .setMake(c.car.make)
                        .setModel(c.car.model)
                        .setTrim(c.car.trim)
                        .setColor(c.car.color)
                        .setYear(c.car.year)
                        .setMileage(c.car.mileage))
                .setDriver(CarMessage.Driver.newBuilder()
                        .setFirstname(c.driver.firstname)
                        .setLastname(c.driver.lastname)
                        .setDriverId(c.driver.driverId))
                .build();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
