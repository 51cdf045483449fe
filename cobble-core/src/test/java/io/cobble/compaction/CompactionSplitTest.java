package io.cobble.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.sst.TableProperties;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CompactionSplitTest {
  private long nextNumber = 1;

  private FileMeta file(String lo, String hi, long size) {
    TableProperties p =
        new TableProperties(
            10,
            lo.getBytes(UTF_8),
            hi.getBytes(UTF_8),
            1,
            0,
            Long.MAX_VALUE,
            Collections.emptyMap());
    return new FileMeta(nextNumber++, 0, size, p, null);
  }

  private static Compaction merge(List<FileMeta> inputs, List<FileMeta> overlaps) {
    return new Compaction(Compaction.Kind.MERGE, 0, 0, 1, inputs, overlaps, true, 0);
  }

  @Test
  void partsCoverTheKeySpaceAndReadEachOutputLevelFileOnce() {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      List<FileMeta> level = new ArrayList<>();
      int files = 2 + random.nextInt(20);
      for (int i = 0; i < files; i++) {
        String base = String.format("k%04d", i * 10);
        level.add(file(base + "a", base + "z", 1 + random.nextInt(1000)));
      }
      List<FileMeta> inputs =
          Arrays.asList(file("a", "zz", 50), file(String.format("k%04d", 35), "k0036", 5));
      int parts = 1 + random.nextInt(6);
      Compaction c = merge(inputs, level);
      List<Compaction> split = CompactionSplit.of(c, parts);

      assertTrue(split.size() <= parts && !split.isEmpty(), "round " + round);
      assertNull(split.get(0).lowerBound());
      assertNull(split.get(split.size() - 1).upperBound());
      List<FileMeta> read = new ArrayList<>();
      for (int p = 0; p < split.size(); p++) {
        Compaction part = split.get(p);
        if (p > 0) {
          assertArrayEquals(split.get(p - 1).upperBound(), part.lowerBound(), "contiguous ranges");
          assertTrue(
              split.get(p - 1).lowerBound() == null
                  || Bytes.compare(split.get(p - 1).lowerBound(), part.lowerBound()) < 0);
        }
        read.addAll(part.overlaps());
        for (FileMeta f : part.overlaps()) {
          assertTrue(inRange(part, f.smallest()) && inRange(part, f.largest()), "whole file");
        }
        // Every input that may hold a key of the part is read by it, and no other.
        for (FileMeta f : inputs) {
          boolean overlaps =
              (part.lowerBound() == null || Bytes.compare(f.largest(), part.lowerBound()) >= 0)
                  && (part.upperBound() == null
                      || Bytes.compare(f.smallest(), part.upperBound()) < 0);
          assertEquals(overlaps, part.inputs().contains(f), "input " + f + " in " + part);
        }
        assertEquals(c.kind(), part.kind());
        assertEquals(c.bottommost(), part.bottommost());
        assertEquals(c.outputLevel(), part.outputLevel());
      }
      assertEquals(level, read, "each output-level file read once, in order: round " + round);
    }
  }

  private static boolean inRange(Compaction part, byte[] key) {
    return (part.lowerBound() == null || Bytes.compare(key, part.lowerBound()) >= 0)
        && (part.upperBound() == null || Bytes.compare(key, part.upperBound()) < 0);
  }

  @Test
  void partsReadAboutTheSameBytesOfTheOutputLevel() {
    List<FileMeta> level = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      level.add(file(String.format("k%04da", i), String.format("k%04dz", i), 100));
    }
    List<Compaction> split =
        CompactionSplit.of(merge(Collections.singletonList(file("a", "z", 9)), level), 4);
    assertEquals(4, split.size());
    for (Compaction part : split) {
      assertEquals(10, part.overlaps().size(), part.toString());
    }
  }

  @Test
  void onlyMergesWithTwoOutputLevelFilesOrMoreAreSplit() {
    FileMeta in = file("a", "z", 9);
    Compaction one =
        merge(Collections.singletonList(in), Collections.singletonList(file("b", "c", 5)));
    assertSame(one, CompactionSplit.of(one, 4).get(0));
    List<FileMeta> two = Arrays.asList(file("b", "c", 5), file("d", "e", 5));
    Compaction unsplit = merge(Collections.singletonList(in), two);
    assertEquals(1, CompactionSplit.of(unsplit, 1).size());
    Compaction cleanup =
        new Compaction(Compaction.Kind.CLEANUP, 0, 1, 1, two, Collections.emptyList(), false, 0);
    assertEquals(1, CompactionSplit.of(cleanup, 4).size());
    assertEquals(2, CompactionSplit.of(unsplit, 4).size());
  }

  @Test
  void onlyMergesWritersWaitForAreSplit() {
    Config config =
        Config.builder()
            .set("compaction.l0-file-limit", 2)
            .set("compaction.write-stall-limit", 40)
            .set("compaction.threads", 3)
            .set("compaction.subcompactions", 4)
            .build();
    List<FileMeta> level = Arrays.asList(file("b", "c", 5), file("d", "e", 5));
    assertEquals(1, CompactionSplit.parts(merge(l0Files(19), level), false, config));
    assertEquals(3, CompactionSplit.parts(merge(l0Files(20), level), false, config));
    assertEquals(3, CompactionSplit.parts(merge(l0Files(2), level), true, config));
    Compaction deeper = new Compaction(Compaction.Kind.MERGE, 0, 1, 2, l0Files(30), level, true, 0);
    assertEquals(1, CompactionSplit.parts(deeper, false, config));
    assertEquals(3, CompactionSplit.parts(deeper, true, config));
    Config small =
        Config.builder()
            .set("compaction.l0-file-limit", 12)
            .set("compaction.write-stall-limit", 14)
            .set("compaction.subcompactions", 2)
            .build();
    assertEquals(1, CompactionSplit.parts(merge(l0Files(23), level), false, small));
    assertEquals(2, CompactionSplit.parts(merge(l0Files(24), level), false, small));
  }

  private List<FileMeta> l0Files(int n) {
    List<FileMeta> files = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      files.add(file("a", "z", 1));
    }
    return files;
  }
}
