package dev.callbench.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LifecycleTest {
    @Test
    void ipv6AddressesAreWrittenShort() {
        assertEquals("::1", Lifecycle.compressed("0:0:0:0:0:0:0:1"));
        assertEquals("::", Lifecycle.compressed("0:0:0:0:0:0:0:0"));
        assertEquals("fe80::1", Lifecycle.compressed("fe80:0:0:0:0:0:0:1%lo"));
        assertEquals("2001:db8::1:0:0:1", Lifecycle.compressed("2001:db8:0:0:1:0:0:1"));
        assertEquals("2001:db8:0:1:1:1:1:1", Lifecycle.compressed("2001:db8:0:1:1:1:1:1"));
    }
}
