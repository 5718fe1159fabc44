package dev.callbench.seed003;

import java.util.Random;

/** The article's message, randomly generated per call in the format of its JSON template. */
final class Cars {
    private Cars() {}

    private static final String[] MAKES = {"toyota", "honda", "ford", "subaru", "mazda", "volvo"};
    private static final String[] MODELS = {"corolla", "civic", "focus", "outback", "cx-5", "xc60"};
    private static final String[] TRIMS = {"4DR Sedan", "LX", "SE", "Limited", "Touring"};
    private static final String[] COLORS = {"gray", "black", "white", "red", "blue"};
    private static final String[] FIRST = {"John", "Maria", "Wei", "Aisha", "Lars"};
    private static final String[] LAST = {"Smith", "Garcia", "Chen", "Okafor", "Berg"};

    /** The JSON body of POST /cars (Jackson writes the public fields; driverId as in the seed). */
    public static final class Car {
        public Vehicle car = new Vehicle();
        public Driver driver = new Driver();

        @Override
        public boolean equals(Object o) {
            return o instanceof Car c && car.equals(c.car) && driver.equals(c.driver);
        }

        @Override
        public int hashCode() {
            return car.hashCode() * 31 + driver.hashCode();
        }
    }

    public static final class Vehicle {
        public String make;
        public String model;
        public String trim;
        public String color;
        public int year;
        public int mileage;

        @Override
        public boolean equals(Object o) {
            return o instanceof Vehicle v && make.equals(v.make) && model.equals(v.model) && trim.equals(v.trim)
                    && color.equals(v.color) && year == v.year && mileage == v.mileage;
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(make, model, trim, color, year, mileage);
        }
    }

    public static final class Driver {
        public String firstname;
        public String lastname;
        public String driverId;

        @Override
        public boolean equals(Object o) {
            return o instanceof Driver d && firstname.equals(d.firstname) && lastname.equals(d.lastname)
                    && driverId.equals(d.driverId);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(firstname, lastname, driverId);
        }
    }

    static Car random(Random r) {
        Car c = new Car();
        c.car.make = pick(r, MAKES);
        c.car.model = pick(r, MODELS);
        c.car.trim = pick(r, TRIMS);
        c.car.color = pick(r, COLORS);
        c.car.year = 1990 + r.nextInt(35);
        c.car.mileage = r.nextInt(300_000);
        c.driver.firstname = pick(r, FIRST);
        c.driver.lastname = pick(r, LAST);
        c.driver.driverId = Long.toHexString(r.nextLong());
        return c;
    }

    private static String pick(Random r, String[] values) {
        return values[r.nextInt(values.length)];
    }

    /** A JSON string of {@code s}. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
