package dev.callbench.grpc;

import callbench.v1.CarsOuterClass.CarMessage;
import callbench.v1.EchoOuterClass.EchoMessage;
import callbench.v1.EchoOuterClass.Location;
import callbench.v1.EchoOuterClass.Record;
import callbench.v1.LifeOuterClass;
import callbench.v1.RecordsOuterClass.UploadSummary;
import callbench.v1.StudentsOuterClass;
import dev.callbench.workloads.Cars;
import dev.callbench.workloads.Echo;
import dev.callbench.workloads.Life;
import dev.callbench.workloads.Records;
import dev.callbench.workloads.Students;
import java.util.ArrayList;
import java.util.List;

/** Between the protobuf messages and the workloads' types (crates/contract/src/convert.rs). */
final class Convert {
    private Convert() {}

    static StudentsOuterClass.ListStudentsResponse students(Students.ListResponse list) {
        StudentsOuterClass.ListStudentsResponse.Builder out = StudentsOuterClass.ListStudentsResponse.newBuilder();
        for (Students.Student s : list.students()) {
            Students.Address a = s.address();
            out.addStudents(StudentsOuterClass.Student.newBuilder()
                    .setId(s.id())
                    .setFirstName(s.firstName())
                    .setLastName(s.lastName())
                    .setEmail(s.email())
                    .setAge(s.age())
                    .setGpa(s.gpa())
                    .setEnrolled(s.enrolled())
                    .setMajor(s.major())
                    .addAllCourses(s.courses())
                    .setAddress(StudentsOuterClass.Address.newBuilder()
                            .setStreet(a.street())
                            .setCity(a.city())
                            .setState(a.state())
                            .setPostalCode(a.postalCode())
                            .setCountry(a.country()))
                    .setEnrollmentDate(s.enrollmentDate())
                    .setPhone(s.phone()));
        }
        return out.build();
    }

    /** An absent car or driver stays null: the workload refuses it. */
    static Cars.Message car(CarMessage m) {
        CarMessage.Car c = m.getCar();
        CarMessage.Driver d = m.getDriver();
        return new Cars.Message(
                m.hasCar() ? new Cars.Car(c.getMake(), c.getModel(), c.getTrim(), c.getColor(), c.getYear(),
                        c.getMileage()) : null,
                m.hasDriver() ? new Cars.Driver(d.getFirstname(), d.getLastname(), d.getDriverId()) : null);
    }

    static List<Life.Cell> cells(List<LifeOuterClass.Cell> board) {
        List<Life.Cell> cells = new ArrayList<>(board.size());
        for (LifeOuterClass.Cell c : board) {
            cells.add(new Life.Cell(c.getX(), c.getY()));
        }
        return cells;
    }

    static LifeOuterClass.Board board(Life.Board board) {
        LifeOuterClass.Board.Builder out = LifeOuterClass.Board.newBuilder();
        for (Life.Cell c : board.board()) {
            out.addBoard(LifeOuterClass.Cell.newBuilder().setX(c.x()).setY(c.y()));
        }
        return out.build();
    }

    /** The echo workload's checks on the message as it came: kinds known, numbers finite. */
    static void checkEcho(EchoMessage message) {
        for (int i = 0; i < message.getRecordsCount(); i++) {
            Record r = message.getRecords(i);
            // An absent location reads as the default one: coordinates 0.
            Echo.checkRecord(i, r.getKindValue(), r.getScore(), r.getLocation().getLatitude(),
                    r.getLocation().getLongitude());
        }
    }

    /** Counts an uploaded record, after echo's checks. */
    static void add(Records.Upload upload, Record r) {
        upload.add(r.getId(), r.getActive(), r.getSamplesCount(), r.getKindValue(), r.getScore(),
                r.getLocation().getLatitude(), r.getLocation().getLongitude());
    }

    static UploadSummary summary(Records.UploadSummary s) {
        return UploadSummary.newBuilder()
                .setCount(s.count())
                .setActiveCount(s.activeCount())
                .setFirstId(s.firstId())
                .setLastId(s.lastId())
                .setSampleCount(s.sampleCount())
                .build();
    }

    /** A workload record (a download's: location present) as its protobuf message. */
    static Record record(Echo.Record r) {
        Record.Builder out = Record.newBuilder()
                .setId(r.id())
                .setName(r.name())
                .setScore(r.score())
                .setActive(r.active())
                .setKindValue(r.kind().number())
                .addAllTags(r.tags());
        if (r.location() != null) {
            Echo.Location l = r.location();
            out.setLocation(Location.newBuilder().setCity(l.city()).setLatitude(l.latitude())
                    .setLongitude(l.longitude()));
        }
        for (long sample : r.samples()) {
            out.addSamples(sample);
        }
        return out.build();
    }
}
