package dev.callbench.spring;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.callbench.workloads.Echo;
import dev.callbench.workloads.Limits;
import dev.callbench.workloads.Records;
import dev.callbench.workloads.WorkloadException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * The records routes, REST's counterparts of callbench.v1.Records: an upload in one JSON body or streamed as
 * NDJSON, both answered with the summary, and a download streamed as NDJSON. The upload is read from the
 * request's InputStream a line at a time as it arrives (chunked or not); the download is Spring MVC's
 * {@link StreamingResponseBody}, written record by record on Spring's task executor and sent in Tomcat's
 * chunks. Records are parsed by the strict Jackson of the other routes and checked as echo checks them.
 */
@RestController
class RecordsController {
    static final String UPLOAD_PATH = "/records/upload";

    private final ObjectReader recordReader;
    private final ObjectWriter recordWriter;
    private final ObjectMapper json;

    RecordsController(ObjectMapper json) {
        this.json = json;
        this.recordReader = json.readerFor(Echo.Record.class);
        // One flush at the end, not one per record (each flush would be a chunk of its own).
        this.recordWriter = json.writerFor(Echo.Record.class).without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);
    }

    @PostMapping(path = "/records/batch", consumes = MediaType.APPLICATION_JSON_VALUE)
    Records.UploadSummary batch(@RequestBody Records.Batch batch) {
        return Records.batch(batch);
    }

    /** The first bad line is the answer (400, or 413 for a line over 4 MiB or an upload over 64 MiB). */
    @PostMapping(path = UPLOAD_PATH, consumes = MediaType.APPLICATION_NDJSON_VALUE)
    Records.UploadSummary upload(InputStream body) throws IOException {
        NdjsonLines lines = new NdjsonLines(body, Limits.MAX_BODY_BYTES);
        Records.Upload upload = new Records.Upload();
        while (lines.next()) {
            upload.add(parseRecord(lines));
        }
        return upload.summary();
    }

    /** One line as a record: a JSON object, strictly typed. */
    private Echo.Record parseRecord(NdjsonLines lines) throws IOException {
        byte[] line = lines.buffer();
        int i = lines.offset();
        int end = i + lines.length();
        while (i < end && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
            i++;
        }
        if (i == end || line[i] != '{') {
            throw WorkloadException.invalid("line " + lines.number() + ": a record must be a JSON object");
        }
        try {
            return recordReader.readValue(line, lines.offset(), lines.length());
        } catch (JsonProcessingException e) {
            throw WorkloadException.invalid("line " + lines.number() + ": " + e.getOriginalMessage());
        }
    }

    /**
     * {@code count} records of the contract's rule, one JSON line each, made as they are written; count is
     * required, a decimal integer in 0..100000.
     */
    @GetMapping("/records")
    ResponseEntity<StreamingResponseBody> download(@RequestParam(name = "count", required = false) String count) {
        int n = Records.checkDownload(parseCount(count));
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_NDJSON).body(out -> write(out, n));
    }

    private void write(OutputStream out, int count) throws IOException {
        // The generator buffers; it leaves the response stream open (Spring flushes and completes it). No root
        // separator (Jackson's is a space before every value but the first): each record ends its line instead.
        try (JsonGenerator gen = json.getFactory().createGenerator(out)
                .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)) {
            gen.setRootValueSeparator(null);
            for (int i = 0; i < count; i++) {
                recordWriter.writeValue(gen, Records.downloaded(i));
                gen.writeRaw('\n');
            }
        }
    }

    /** An optional sign and ASCII digits (Long.parseLong alone would take other scripts' digits too). */
    private static long parseCount(String count) {
        if (count == null) {
            throw WorkloadException.invalid("count is required");
        }
        int i = count.startsWith("+") || count.startsWith("-") ? 1 : 0;
        boolean digits = i < count.length();
        for (; i < count.length(); i++) {
            char c = count.charAt(i);
            digits &= c >= '0' && c <= '9';
        }
        try {
            if (digits) {
                return Long.parseLong(count);
            }
        } catch (NumberFormatException e) {
            // over the 64-bit range: not an integer the API knows
        }
        throw WorkloadException.invalid("count must be a decimal integer");
    }
}
