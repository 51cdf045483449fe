package io.cobble.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cobble.Config;
import io.cobble.memtable.SkipListMemTable;
import io.cobble.sst.TableProperties;
import io.cobble.version.FileMeta;
import io.cobble.version.TestVersions;
import io.cobble.version.Version;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompactionPickerTest {
  private long nextNumber = 1;

  private FileMeta file(String lo, String hi, long size, long maxExpiry) {
    return file(lo, hi, size, maxExpiry, Long.MAX_VALUE);
  }

  private FileMeta file(String lo, String hi, long size, long maxExpiry, long minMergeWt) {
    TableProperties p =
        new TableProperties(
            10,
            lo.getBytes(UTF_8),
            hi.getBytes(UTF_8),
            1,
            maxExpiry,
            minMergeWt,
            Collections.emptyMap());
    return new FileMeta(nextNumber++, 0, size, p, null);
  }

  private FileMeta file(String lo, String hi, long size) {
    return file(lo, hi, size, 0);
  }

  private static Version version(SkipListMemTable mem, List<List<FileMeta>> levels) {
    return TestVersions.oneTree(mem, levels);
  }

  @SafeVarargs
  private static List<List<FileMeta>> levels(List<FileMeta>... perLevel) {
    List<List<FileMeta>> l = new ArrayList<>(Arrays.asList(perLevel));
    while (l.size() < 5) {
      l.add(new ArrayList<>());
    }
    return l;
  }

  private static Config config(String policy) {
    return Config.builder()
        .set("compaction.policy", policy)
        .set("compaction.level-base-size", "2kb")
        .set("compaction.level-size-multiplier", 4)
        .set("compaction.max-levels", 5)
        .set("compaction.l0-file-limit", 2)
        .build();
  }

  private final SkipListMemTable mem = new SkipListMemTable(1, (k, a, b) -> b);

  private List<List<FileMeta>> shape() {
    FileMeta abc = file("a", "c", 1000);
    FileMeta def = file("d", "f", 1000);
    FileMeta ghi = file("g", "i", 1000);
    FileMeta ab = file("a", "b", 20_000);
    FileMeta de = file("d", "e", 100);
    FileMeta gh = file("g", "h", 5_000);
    return levels(
        new ArrayList<>(),
        new ArrayList<>(Arrays.asList(abc, def, ghi)),
        new ArrayList<>(Arrays.asList(ab, de, gh)));
  }

  @Test
  void minOverlapPicksTheCheapestFileOfTheShallowestDueLevel() {
    List<List<FileMeta>> l = shape();
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 0);
    assertEquals(1, c.inputLevel());
    assertEquals(l.get(1).get(1), c.inputs().get(0));
    assertEquals(Collections.singletonList(l.get(2).get(1)), c.overlaps());
    assertEquals(Compaction.Kind.MERGE, c.kind());
  }

  @Test
  void roundRobinWalksTheLevelInKeyOrder() {
    List<List<FileMeta>> l = shape();
    CompactionPicker picker = new CompactionPicker(config("round_robin"));
    Version v = version(mem, l);
    assertEquals(l.get(1).get(0), picker.pick(v, 0, 0).inputs().get(0));
    assertEquals(l.get(1).get(1), picker.pick(v, 0, 0).inputs().get(0));
    assertEquals(l.get(1).get(2), picker.pick(v, 0, 0).inputs().get(0));
    assertEquals(l.get(1).get(0), picker.pick(v, 0, 0).inputs().get(0));
  }

  @Test
  void scorePriorityPicksTheMostOverfullLevel() {
    List<List<FileMeta>> l = shape();
    // L1: 3000 / 2048 ≈ 1.5; L2: 25100 / 8192 ≈ 3.1, and L3 is empty: a trivial move.
    Compaction c = new CompactionPicker(config("score_priority")).pick(version(mem, l), 0, 0);
    assertEquals(2, c.inputLevel());
    assertEquals(Compaction.Kind.TRIVIAL_MOVE, c.kind());
  }

  @Test
  void l0CompactionTakesAllL0FilesWhenTheLimitIsReached() {
    FileMeta newer = file("b", "e", 10);
    FileMeta older = file("a", "c", 10);
    FileMeta l1 = file("c", "d", 10);
    FileMeta l1far = file("x", "z", 10);
    List<List<FileMeta>> l =
        levels(
            new ArrayList<>(Arrays.asList(newer, older)),
            new ArrayList<>(Arrays.asList(l1, l1far)));
    Compaction c = new CompactionPicker(config("score_priority")).pick(version(mem, l), 0, 0);
    assertEquals(0, c.inputLevel());
    assertEquals(Arrays.asList(newer, older), c.inputs());
    assertEquals(Collections.singletonList(l1), c.overlaps());
    assertEquals(true, c.bottommost());
    List<List<FileMeta>> one = levels(new ArrayList<>(Arrays.asList(newer)));
    assertNull(new CompactionPicker(config("score_priority")).pick(version(mem, one), 0, 0));
  }

  @Test
  void aLoneL0FileWithNothingBelowMovesWithoutRewriting() {
    Config oneFileLimit =
        config("score_priority").toBuilder().set("compaction.l0-file-limit", 1).build();
    FileMeta l0 = file("b", "e", 10);
    List<List<FileMeta>> free = levels(new ArrayList<>(Arrays.asList(l0)), new ArrayList<>());
    Compaction move = new CompactionPicker(oneFileLimit).pick(version(mem, free), 0, 0);
    assertEquals(Compaction.Kind.TRIVIAL_MOVE, move.kind());
    assertEquals(Arrays.asList(l0), move.inputs());
    assertEquals(1, move.outputLevel());

    FileMeta below = file("d", "k", 10);
    List<List<FileMeta>> covered =
        levels(new ArrayList<>(Arrays.asList(l0)), new ArrayList<>(Arrays.asList(below)));
    Compaction merge = new CompactionPicker(oneFileLimit).pick(version(mem, covered), 0, 0);
    assertEquals(Compaction.Kind.MERGE, merge.kind(), "an overlapping L1 file must be rewritten");
    assertEquals(Arrays.asList(l0, below), merge.allInputs());
  }

  @Test
  void manualCompactionPushesEveryLevelDownUntilOneLevelHoldsTheTree() {
    CompactionPicker picker = new CompactionPicker(config("score_priority"));
    FileMeta l1 = file("a", "c", 10);
    FileMeta l3 = file("b", "d", 10);
    List<List<FileMeta>> spread =
        levels(
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(l1)),
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(l3)));
    Compaction c = picker.pickManual(version(mem, spread), 0, 0);
    assertEquals(1, c.inputLevel());
    assertEquals(2, c.outputLevel());
    assertEquals(Compaction.Kind.TRIVIAL_MOVE, c.kind(), "L2 is empty: the file moves down");

    List<List<FileMeta>> settled =
        levels(
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(l1, file("x", "z", 10))));
    assertNull(picker.pickManual(version(mem, settled), 0, 0), "one level already holds it all");
  }

  @Test
  void expiredFilesDropOnlyWithNothingOlderBelowAndNoEarlierMergeAbove() {
    FileMeta expired = file("a", "c", 10, 500);
    List<List<FileMeta>> l =
        levels(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(Arrays.asList(expired)));
    CompactionPicker picker = new CompactionPicker(config("score_priority"));
    Compaction c = picker.pick(version(mem, l), 0, 1000);
    assertEquals(Compaction.Kind.DROP_EXPIRED, c.kind());
    assertNull(picker.pick(version(mem, l), 0, 400));
    FileMeta below = file("b", "b", 10);
    List<List<FileMeta>> covered =
        levels(
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(expired)),
            new ArrayList<>(Arrays.asList(below)));
    assertNull(picker.pick(version(mem, covered), 0, 1000));
    SkipListMemTable merging = new SkipListMemTable(2, (k, a, b) -> b);
    merging.noteMerge(300);
    assertNull(picker.pick(version(merging, l), 0, 1000));
  }

  @Test
  void expiredValuesInRewrittenOverlapsRespectMergesInTheInputLevelsOtherFiles() {
    // Regression (model test seed 10): the L2 file spans keys that live in another L1 file with
    // a merge written while an L2 value was alive; rewriting L2 must not drop that value.
    FileMeta input = file("a", "c", 5_000);
    FileMeta otherWithMerge = file("x", "z", 10, 0, 300);
    FileMeta wide = file("a", "z", 100);
    List<List<FileMeta>> l =
        levels(
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(input, otherWithMerge)),
            new ArrayList<>(Arrays.asList(wide)));
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 1000);
    assertEquals(Compaction.Kind.MERGE, c.kind());
    assertEquals(input, c.inputs().get(0));
    assertEquals(Collections.singletonList(wide), c.overlaps());
    assertEquals(300, c.dropExpiredBefore());
  }

  @Test
  void bottommostLooksBelowTheWholeRewrittenRangeNotJustTheInputs() {
    // Regression (model test seed 12): the L2 overlap reaches past the L1 input, and L3 holds
    // older data there; resolving merges as if nothing were below would lose it.
    FileMeta input = file("a", "c", 5_000);
    FileMeta wide = file("b", "m", 100);
    FileMeta deeper = file("k", "l", 100);
    List<List<FileMeta>> l =
        levels(
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(input)),
            new ArrayList<>(Arrays.asList(wide)),
            new ArrayList<>(Arrays.asList(deeper)));
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 1000);
    assertEquals(Compaction.Kind.MERGE, c.kind());
    assertEquals(Collections.singletonList(wide), c.overlaps());
    assertEquals(false, c.bottommost());
  }
}
