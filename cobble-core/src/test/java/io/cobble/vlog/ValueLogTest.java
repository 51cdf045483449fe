package io.cobble.vlog;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.storage.DataFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the value log promises: a pointer returned by {@code append} reads back exactly its value
 * (any length, any order, from several threads), and a damaged file or pointer is a {@link
 * CorruptionException} naming the file, never other bytes.
 */
class ValueLogTest {

  @TempDir Path dir;

  private Path write(List<byte[]> values, List<byte[]> pointers) {
    Path path = dir.resolve("000007.vlog");
    try (ValueLogWriter w = new ValueLogWriter(path, 7)) {
      for (byte[] v : values) {
        pointers.add(w.append(v));
      }
      assertEquals(values.size(), w.entries());
      w.finish(true);
    }
    return path;
  }

  private static List<byte[]> randomValues(long seed, int n) {
    Random random = new Random(seed);
    List<byte[]> values = new ArrayList<>();
    values.add(new byte[0]);
    for (int i = 1; i < n; i++) {
      byte[] v = new byte[random.nextInt(i % 10 == 0 ? 200_000 : 3000)];
      random.nextBytes(v);
      values.add(v);
    }
    return values;
  }

  @Test
  void everyPointerReadsBackItsOwnValueInAnyOrder() throws Exception {
    List<byte[]> values = randomValues(42, 60);
    List<byte[]> pointers = new ArrayList<>();
    Path path = write(values, pointers);
    assertEquals(Files.size(path), 12 + values.stream().mapToLong(v -> 8 + v.length).sum());
    try (ValueLogReader r = new ValueLogReader(DataFile.local(path), -1)) {
      for (int i = values.size() - 1; i >= 0; i--) {
        assertEquals(7, ValuePointer.fileNumber(pointers.get(i)));
        assertArrayEquals(values.get(i), r.read(pointers.get(i)), "value " + i);
      }
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int offset = t;
        Thread thread =
            new Thread(
                () -> {
                  try {
                    for (int i = offset; i < values.size(); i += 4) {
                      assertArrayEquals(values.get(i), r.read(pointers.get(i)));
                    }
                  } catch (Throwable e) {
                    synchronized (failures) {
                      failures.add(e);
                    }
                  }
                });
        threads.add(thread);
        thread.start();
      }
      for (Thread thread : threads) {
        thread.join();
      }
      assertTrue(failures.isEmpty(), String.valueOf(failures));
    }
  }

  @Test
  void aFlippedByteInAValueIsACorruptionNotOtherBytes() throws Exception {
    List<byte[]> values = Arrays.asList("first".getBytes(UTF_8), "second".getBytes(UTF_8));
    List<byte[]> pointers = new ArrayList<>();
    Path path = write(values, pointers);
    byte[] bytes = Files.readAllBytes(path);
    int secondValueAt = 12 + 8 + values.get(0).length + 4;
    bytes[secondValueAt + 2] ^= 0x10;
    Files.write(path, bytes);
    try (ValueLogReader r = new ValueLogReader(DataFile.local(path), -1)) {
      assertArrayEquals(values.get(0), r.read(pointers.get(0)), "the intact record still reads");
      CorruptionException e =
          assertThrows(CorruptionException.class, () -> r.read(pointers.get(1)));
      assertTrue(e.getMessage().contains("checksum"), e.getMessage());
      assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
    }
  }

  @Test
  void aPointerWhoseLengthDisagreesWithTheRecordIsACorruption() throws Exception {
    List<byte[]> pointers = new ArrayList<>();
    Path path = write(Arrays.asList("abcdef".getBytes(UTF_8), "gh".getBytes(UTF_8)), pointers);
    long[] p = ValuePointer.decode(pointers.get(0));
    byte[] shorter = ValuePointer.encode(p[0], p[1], (int) p[2] - 1);
    byte[] pastTheEnd = ValuePointer.encode(p[0], Files.size(path) - 4, 100);
    byte[] intoTheHeader = ValuePointer.encode(p[0], 3, 1);
    try (ValueLogReader r = new ValueLogReader(DataFile.local(path), -1)) {
      assertThrows(CorruptionException.class, () -> r.read(shorter));
      assertThrows(CorruptionException.class, () -> r.read(pastTheEnd));
      assertThrows(CorruptionException.class, () -> r.read(intoTheHeader));
    }
  }

  @Test
  void aFileWithoutTheHeaderIsRejectedAtOpen() throws Exception {
    Path path = write(List.of("v".getBytes(UTF_8)), new ArrayList<>());
    byte[] good = Files.readAllBytes(path);
    assertEquals("CobbleVL", new String(good, 0, 8, UTF_8));

    byte[] badMagic = good.clone();
    badMagic[0] ^= 1;
    assertOpenFails(badMagic, "magic");

    byte[] newerVersion = good.clone();
    newerVersion[11] = 2;
    assertOpenFails(newerVersion, "version 2");

    assertOpenFails(Arrays.copyOf(good, 11), "shorter than its header");
  }

  @Test
  void aWriterClosedWithoutFinishingLeavesNoFile() {
    Path path = dir.resolve("000008.vlog");
    try (ValueLogWriter w = new ValueLogWriter(path, 8)) {
      w.append("lost".getBytes(UTF_8));
    }
    assertFalse(Files.exists(path));
  }

  private void assertOpenFails(byte[] content, String expected) throws Exception {
    Path path = dir.resolve("damaged.vlog");
    Files.write(path, content);
    CorruptionException e =
        assertThrows(
            CorruptionException.class, () -> new ValueLogReader(DataFile.local(path), -1).close());
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
