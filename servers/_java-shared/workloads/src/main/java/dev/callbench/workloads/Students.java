package dev.callbench.workloads;

import java.util.List;

/** Seed 002's students workload: a list of two student records (crates/workloads/src/students.rs). */
public final class Students {
    private Students() {}

    public record Address(String street, String city, String state, String postalCode, String country) {}

    public record Student(long id, String firstName, String lastName, String email, int age, double gpa,
            boolean enrolled, String major, List<String> courses, Address address, String enrollmentDate,
            String phone) {}

    public record ListResponse(List<Student> students) {}

    /** The two records, built on every call as a handler returning fresh data would. */
    public static ListResponse list() {
        return new ListResponse(List.of(
                new Student(1, "Emily", "Johnson", "emily.johnson@example.edu", 20, 3.8, true,
                        "Computer Science",
                        List.of("Data Structures", "Operating Systems", "Linear Algebra", "Databases"),
                        new Address("1420 Maple Avenue", "Springfield", "IL", "62704", "USA"),
                        "2023-09-01", "+1-217-555-0142"),
                new Student(2, "Michael", "Chen", "michael.chen@example.edu", 22, 3.45, true,
                        "Mechanical Engineering",
                        List.of("Thermodynamics", "Fluid Mechanics", "Materials Science", "Calculus III"),
                        new Address("87 Oak Street, Apt 3B", "Madison", "WI", "53703", "USA"),
                        "2021-09-01", "+1-608-555-0187")));
    }
}
