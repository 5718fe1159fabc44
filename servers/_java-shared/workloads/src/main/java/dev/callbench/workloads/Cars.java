package dev.callbench.workloads;

import java.nio.charset.StandardCharsets;

/** Seed 003's cars workload: validate the car + driver message and echo it (crates/workloads/src/cars.rs). */
public final class Cars {
    private Cars() {}

    /** {@code year} and {@code mileage} are proto uint32: compared unsigned. */
    public record Car(String make, String model, String trim, String color, int year, int mileage) {
        public Car {
            make = Defaults.orEmpty(make);
            model = Defaults.orEmpty(model);
            trim = Defaults.orEmpty(trim);
            color = Defaults.orEmpty(color);
        }
    }

    public record Driver(String firstname, String lastname, String driverId) {
        public Driver {
            firstname = Defaults.orEmpty(firstname);
            lastname = Defaults.orEmpty(lastname);
            driverId = Defaults.orEmpty(driverId);
        }
    }

    /** The seed's {@code Message}; a missing car or driver is null. */
    public record Message(Car car, Driver driver) {}

    /** Checks the message and gives it back unchanged. */
    public static Message send(Message message) {
        validate(message.car(), message.driver());
        return message;
    }

    public static void validate(Car car, Driver driver) {
        if (car == null) {
            throw WorkloadException.invalid("car is required");
        }
        if (driver == null) {
            throw WorkloadException.invalid("driver is required");
        }
        if (car.make().isEmpty() || car.model().isEmpty()) {
            throw WorkloadException.invalid("car.make and car.model are required");
        }
        String[] strings = {car.make(), car.model(), car.trim(), car.color(),
            driver.firstname(), driver.lastname(), driver.driverId()};
        for (String s : strings) {
            if (utf8Length(s) > Limits.MAX_STRING_BYTES) {
                throw WorkloadException.invalid("strings are limited to " + Limits.MAX_STRING_BYTES + " bytes");
            }
        }
        if (Integer.compareUnsigned(car.year(), Limits.MIN_CAR_YEAR) < 0
                || Integer.compareUnsigned(car.year(), Limits.MAX_CAR_YEAR) > 0) {
            throw WorkloadException.invalid(
                    "car.year must be in " + Limits.MIN_CAR_YEAR + ".." + Limits.MAX_CAR_YEAR);
        }
        if (Integer.compareUnsigned(car.mileage(), Limits.MAX_MILEAGE) > 0) {
            throw WorkloadException.invalid("car.mileage must be at most " + Limits.MAX_MILEAGE);
        }
    }

    /** UTF-8 bytes of a string; the limits are in bytes, as in Rust. */
    static int utf8Length(String s) {
        // Short ASCII strings are the common case: no encoding needed.
        int n = s.length();
        for (int i = 0; i < n; i++) {
            if (s.charAt(i) >= 0x80) {
                return s.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        return n;
    }
}
