package io.cobble.iterator;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What {@link PrefixIterator} promises: exactly the keys under its prefix (one family of the shared
 * memtable), prefix stripped, in order; keys of the neighbouring prefixes and keys shorter than the
 * prefix never leak in, and seeks are relative to the prefix.
 */
class PrefixIteratorTest {

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static SortedListIterator source() {
    return new SortedListIterator()
        .add(b("a"), b("short"))
        .add(b("a1"), b("a1"))
        .add(b("b"), b("b-only"))
        .add(b("b1"), b("v1"))
        .add(b("b3"), b("v3"))
        .add(b("bb1"), b("other family"))
        .add(b("c1"), b("c1"));
  }

  private static List<String> drain(KvIterator it) {
    List<String> out = new ArrayList<>();
    for (; it.valid(); it.next()) {
      out.add(new String(it.key(), UTF_8) + "=" + new String(it.value(), UTF_8));
    }
    return out;
  }

  @Test
  void showsOnlyItsPrefixWithThePrefixStripped() {
    PrefixIterator it = new PrefixIterator(source(), b("b"));
    it.seekToFirst();
    assertEquals(List.of("=b-only", "1=v1", "3=v3", "b1=other family"), drain(it));
    PrefixIterator bb = new PrefixIterator(source(), b("bb"));
    bb.seekToFirst();
    assertEquals(List.of("1=other family"), drain(bb));
  }

  @Test
  void seekIsRelativeToThePrefix() {
    PrefixIterator it = new PrefixIterator(source(), b("b"));
    it.seek(b("2"));
    assertEquals(List.of("3=v3", "b1=other family"), drain(it));
    it.seek(b("z"));
    assertFalse(it.valid(), "past the prefix's last key: the next family's keys stay hidden");
  }

  @Test
  void anEmptyPrefixRangeIsEmptyAndCloseReachesTheSource() {
    SortedListIterator source = source();
    PrefixIterator it = new PrefixIterator(source, b("a2"));
    it.seekToFirst();
    assertFalse(it.valid());
    it.close();
    assertTrue(source.closed);
  }
}
