package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.ByteArrayOutputStream;
import org.junit.jupiter.api.Test;

/** The list column filter on hand-built columns: which elements stay, and what is left alone. */
class TtlCompactionFilterTest {
  private static final long TTL = 100;
  private static final long NOW = 1000;

  @Test
  void everyExpiredElementGoesNotOnlyTheLeadingOnes() {
    byte[] live = element(NOW, "live");
    byte[] list = concat(element(0, "a"), live, element(5, "b"), element(NOW - 50, "c"));
    assertArrayEquals(
        concat(live, element(NOW - 50, "c")),
        TtlCompactionFilter.liveElements(list, TTL, NOW),
        "the two live elements, in their order");
  }

  @Test
  void aListWithNoLiveElementIsDroppedAndOneWithNoExpiredElementIsKeptAsIs() {
    assertNull(
        TtlCompactionFilter.liveElements(concat(element(0, "a"), element(900, "b")), TTL, NOW));
    byte[] allLive = concat(element(901, "a"), element(NOW, "b"));
    assertSame(allLive, TtlCompactionFilter.liveElements(allLive, TTL, NOW));
  }

  @Test
  void aColumnThatIsNotALengthPrefixedListOfTtlValuesIsKeptWhole() {
    byte[] truncated = concat(element(0, "a"), new byte[] {20, 0, 0});
    assertSame(truncated, TtlCompactionFilter.liveElements(truncated, TTL, NOW));
    byte[] shortElement = concat(element(0, "a"), new byte[] {2, 1, 2});
    assertSame(shortElement, TtlCompactionFilter.liveElements(shortElement, TTL, NOW));
  }

  /** {@code varint(length) timestamp(8, big endian) value}: a TtlValue element of a list column. */
  private static byte[] element(long timestamp, String value) {
    byte[] v = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(8 + v.length);
    for (int i = 7; i >= 0; i--) {
      out.write((int) (timestamp >>> (8 * i)));
    }
    out.write(v, 0, v.length);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.write(p, 0, p.length);
    }
    return out.toByteArray();
  }
}
