package dev.callbench.workloads;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;

/** A {@link Life.Cell} in REST JSON: exactly two integers {@code [x, y]}, nothing else. */
final class CellJson {
    private CellJson() {}

    static final class Writer extends StdSerializer<Life.Cell> {
        Writer() {
            super(Life.Cell.class);
        }

        @Override
        public void serialize(Life.Cell cell, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeStartArray(cell, 2);
            gen.writeNumber(cell.x());
            gen.writeNumber(cell.y());
            gen.writeEndArray();
        }
    }

    static final class Reader extends StdDeserializer<Life.Cell> {
        Reader() {
            super(Life.Cell.class);
        }

        @Override
        public Life.Cell deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (!p.isExpectedStartArrayToken()) {
                return (Life.Cell) ctxt.handleUnexpectedToken(Life.Cell.class, p);
            }
            long x = coordinate(p, ctxt);
            long y = coordinate(p, ctxt);
            if (p.nextToken() != JsonToken.END_ARRAY) {
                ctxt.reportInputMismatch(this, "a cell is the pair [x, y]");
            }
            return new Life.Cell(x, y);
        }

        /** The next integer of the pair; floats, strings, null or the end of the array are refused. */
        private long coordinate(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) {
                ctxt.reportInputMismatch(this, "a cell is the pair [x, y] of integers");
            }
            return p.getLongValue(); // out of the long range: an InputCoercionException, so 400
        }
    }
}
