package dev.callbench.workloads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The records workload: the same checks as the Rust crate's unit tests (crates/workloads/src/records.rs). */
class RecordsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aSummaryCountsAndRemembersTheEnds() {
        Records.Upload upload = new Records.Upload();
        for (int i = 0; i < 5; i++) {
            upload.add(Records.downloaded(i));
        }
        assertEquals(new Records.UploadSummary(5, 3, 1, 5, 15), upload.summary());
        assertEquals(new Records.UploadSummary(0, 0, 0, 0, 0), new Records.Upload().summary());
        assertEquals(new Records.UploadSummary(2, 1, 1, 2, 6),
                Records.batch(new Records.Batch(List.of(Records.downloaded(0), Records.downloaded(1)))));
    }

    @Test
    void aRefusedRecordIsNotCounted() {
        Echo.Location nan = new Echo.Location("", Double.NaN, 0);
        List<Echo.Record> bad = List.of(
                new Echo.Record(9, "", Double.POSITIVE_INFINITY, true, null, null, null, null),
                new Echo.Record(9, "", 0, true, null, nan, null, null));
        for (Echo.Record r : bad) {
            Records.Upload upload = new Records.Upload();
            upload.add(Records.downloaded(6));
            WorkloadException e = assertThrows(WorkloadException.class, () -> upload.add(r));
            assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
            assertTrue(e.getMessage().contains("records[1]"), e.getMessage());
            assertEquals(new Records.UploadSummary(1, 1, 7, 7, 3), upload.summary());
        }
        // A protobuf record's kind number the enum does not have.
        for (int kind : new int[] {4, 9, -1}) {
            Records.Upload upload = new Records.Upload();
            assertEquals(ErrorKind.INVALID_ARGUMENT,
                    assertThrows(WorkloadException.class, () -> upload.add(1, true, 0, kind, 0, 0, 0)).kind());
            assertEquals(0, upload.summary().count());
        }
    }

    @Test
    void downloadsFollowTheContractsRule() throws Exception {
        assertEquals("{\"id\":4,\"name\":\"record-000003\",\"score\":1.5,\"active\":false,\"kind\":\"KIND_SMALL\","
                + "\"location\":{\"city\":\"Springfield\",\"latitude\":39.78,\"longitude\":-89.65},"
                + "\"tags\":[\"alpha\",\"beta\"],\"samples\":[3,4,5]}", JSON.writeValueAsString(Records.downloaded(3)));
        assertEquals("record-000000", Records.downloaded(0).name());
        assertEquals("record-999999", Records.downloaded(999_999).name());
        assertEquals("record-1000000", Records.downloaded(1_000_000).name());
        Echo.Record first = Records.downloaded(0);
        assertEquals(Echo.Kind.KIND_SMALL, first.kind());
        assertTrue(first.active());
        assertEquals(0.0, first.score());
        Echo.Record sixth = Records.downloaded(5);
        assertEquals(Echo.Kind.KIND_LARGE, sixth.kind());
        assertEquals(2.5, sixth.score());
        for (long count : new long[] {-1, Limits.MAX_DOWNLOAD + 1, Long.MIN_VALUE, Long.MAX_VALUE}) {
            assertEquals(ErrorKind.INVALID_ARGUMENT,
                    assertThrows(WorkloadException.class, () -> Records.checkDownload(count)).kind(), "" + count);
        }
        assertEquals(0, Records.checkDownload(0));
        assertEquals(100_000, Records.checkDownload(Limits.MAX_DOWNLOAD));
    }

    @Test
    void summariesAreCamelCaseJson() throws Exception {
        assertEquals("{\"count\":2,\"activeCount\":1,\"firstId\":7,\"lastId\":8,\"sampleCount\":0}",
                JSON.writeValueAsString(new Records.UploadSummary(2, 1, 7, 8, 0)));
    }

    @Test
    void aBatchNeedsItsRecords() throws Exception {
        assertEquals(1, JSON.readValue("{\"records\":[{\"id\":1}]}", Records.Batch.class).records().size());
        assertThrows(Exception.class, () -> JSON.readValue("{}", Records.Batch.class));
        assertThrows(Exception.class, () -> JSON.readValue("{\"records\":null}", Records.Batch.class));
    }
}
