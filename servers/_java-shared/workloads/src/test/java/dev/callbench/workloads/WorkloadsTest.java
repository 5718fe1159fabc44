package dev.callbench.workloads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The same checks as the Rust crate's unit tests (crates/workloads/src/*.rs). */
class WorkloadsTest {
    private static List<Life.Cell> cells(long... xy) {
        List<Life.Cell> out = new ArrayList<>();
        for (int i = 0; i < xy.length; i += 2) {
            out.add(new Life.Cell(xy[i], xy[i + 1]));
        }
        return out;
    }

    @Test
    void sha512MatchesTheFips180Vector() {
        assertEquals("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
                Auth.sha512Hex("abc"));
    }

    @Test
    void bothModesAgree() throws Exception {
        Path file = Files.createTempFile("cb-users", ".json");
        StringBuilder json = new StringBuilder("[\n");
        for (int id = 1; id <= 10_000; id++) {
            json.append("{\"id\":").append(id).append(",\"hash\":\"").append(Auth.sha512Hex("password-" + id))
                    .append(id < 10_000 ? "\"},\n" : "\"}\n");
        }
        Files.writeString(file, json.append("]\n"));
        for (Mode mode : Mode.values()) {
            UserStore s = UserStore.open(file, mode);
            assertEquals(Auth.sha512Hex("abc"), s.test(9999, "abc").hash());
            assertEquals(ErrorKind.NOT_FOUND, assertThrows(WorkloadException.class, () -> s.test(0, "abc")).kind());
            assertEquals(ErrorKind.NOT_FOUND, assertThrows(WorkloadException.class, () -> s.test(10_001, "abc")).kind());
            assertEquals(ErrorKind.INVALID_ARGUMENT, assertThrows(WorkloadException.class, () -> s.test(1, "")).kind());
            String tooLong = "é".repeat(513);
            assertEquals(ErrorKind.INVALID_ARGUMENT, assertThrows(WorkloadException.class, () -> s.test(1, tooLong)).kind());
        }
        Files.delete(file);
    }

    @Test
    void blinkerOscillatesAndGliderMoves() {
        List<Life.Cell> horizontal = cells(0, 1, 1, 1, 2, 1);
        assertEquals(cells(1, 0, 1, 1, 1, 2), Life.step(horizontal, 1).board());
        assertEquals(horizontal, Life.step(horizontal, 2).board());
        List<Life.Cell> glider = cells(1, 0, 2, 1, 0, 2, 1, 2, 2, 2);
        assertEquals(cells(1, 3, 2, 1, 2, 3, 3, 2, 3, 3), Life.step(glider, 4).board());
        assertEquals(cells(-48, -66, -47, -68, -47, -66, -46, -67, -46, -66),
                Life.step(cells(-49, -70, -48, -69, -50, -68, -49, -68, -48, -68), 8).board());
    }

    @Test
    void acornSettlesWith633Cells() {
        List<Life.Cell> board = Life.setup().board();
        for (int generation = 0; generation < 5206; ) {
            int n = Math.min(5206 - generation, Limits.MAX_NTIMES);
            board = Life.step(board, n).board();
            generation += n;
        }
        assertEquals(633, board.size());
    }

    @Test
    void lifeLimitsAreEnforced() {
        List<Life.Cell> acorn = Life.setup().board();
        assertThrows(WorkloadException.class, () -> Life.step(acorn, 0));
        assertThrows(WorkloadException.class, () -> Life.step(acorn, 1001));
        assertThrows(WorkloadException.class, () -> Life.step(acorn, -1));
        assertThrows(WorkloadException.class, () -> Life.step(cells(1_000_000_001, 0), 1));
        assertThrows(WorkloadException.class, () -> Life.step(cells(0, Long.MIN_VALUE), 1));
        // Coordinates at the limit, stepped: the packing must hold past +-1e9.
        assertEquals(cells(999_999_999, -1_000_000_000, 999_999_999, -999_999_999, 1_000_000_000, -1_000_000_000,
                1_000_000_000, -999_999_999), Life.step(cells(999_999_999, -1_000_000_000, 999_999_999, -999_999_999,
                1_000_000_000, -1_000_000_000, 1_000_000_000, -999_999_999), 3).board());
    }

    @Test
    void cellsArePairsInJson() throws Exception {
        ObjectMapper json = new ObjectMapper();
        assertTrue(json.writeValueAsString(Life.setup()).startsWith("{\"board\":[[0,2],[1,0],[1,2],[3,1]"));
        assertEquals(cells(1, 2), json.readValue("{\"ntimes\":1,\"board\":[[1,2]]}", Life.StepRequest.class).board());
        for (String bad : List.of("[[1,2,3]]", "[[1]]", "[[1.5,2]]", "[[\"1\",2]]", "[[1,null]]", "[{\"x\":1}]")) {
            assertThrows(Exception.class,
                    () -> json.readValue("{\"ntimes\":1,\"board\":" + bad + "}", Life.StepRequest.class), bad);
        }
    }

    @Test
    void carsAreValidated() {
        Cars.Car car = new Cars.Car("toyota", "corolla", "4DR Sedan", "gray", 2012, 120000);
        Cars.Driver driver = new Cars.Driver("John", "Smith", "someId");
        Cars.send(new Cars.Message(car, driver));
        assertThrows(WorkloadException.class, () -> Cars.send(new Cars.Message(car, null)));
        assertThrows(WorkloadException.class, () -> Cars.validate(new Cars.Car("a", "b", "", "", 1885, 0), driver));
        assertThrows(WorkloadException.class, () -> Cars.validate(new Cars.Car("a", "b", "", "", 2000, -1), driver));
        assertThrows(WorkloadException.class,
                () -> Cars.validate(new Cars.Car("a", "é".repeat(129), "", "", 2000, 0), driver));
    }
}
