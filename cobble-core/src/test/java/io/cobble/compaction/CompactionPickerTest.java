package io.cobble.compaction;

import static io.cobble.compaction.OwnedBuckets.ALL;
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
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 0, ALL);
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
    assertEquals(l.get(1).get(0), picker.pick(v, 0, 0, ALL).inputs().get(0));
    assertEquals(l.get(1).get(1), picker.pick(v, 0, 0, ALL).inputs().get(0));
    assertEquals(l.get(1).get(2), picker.pick(v, 0, 0, ALL).inputs().get(0));
    assertEquals(l.get(1).get(0), picker.pick(v, 0, 0, ALL).inputs().get(0));
  }

  @Test
  void scorePriorityPicksTheMostOverfullLevel() {
    List<List<FileMeta>> l = shape();
    // L1: 3000 / 2048 ≈ 1.5; L2: 25100 / 8192 ≈ 3.1, and L3 is empty: a trivial move.
    Compaction c = new CompactionPicker(config("score_priority")).pick(version(mem, l), 0, 0, ALL);
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
    Compaction c = new CompactionPicker(config("score_priority")).pick(version(mem, l), 0, 0, ALL);
    assertEquals(0, c.inputLevel());
    assertEquals(Arrays.asList(newer, older), c.inputs());
    assertEquals(Collections.singletonList(l1), c.overlaps());
    assertEquals(true, c.bottommost());
    List<List<FileMeta>> one = levels(new ArrayList<>(Arrays.asList(newer)));
    assertNull(new CompactionPicker(config("score_priority")).pick(version(mem, one), 0, 0, ALL));
  }

  /**
   * Under a sustained write L0 is at its limit whenever the picker runs; an L1 grown past L0's
   * score must still be pushed down, or every L0 merge rewrites all of it.
   */
  @Test
  void scorePriorityPushesAnOverfullL1DownBeforeADueL0() {
    List<FileMeta> l0 = new ArrayList<>(Arrays.asList(file("b", "e", 10), file("a", "c", 10)));
    // L1: 3 × 4,000 / 2,048 ≈ 5.9 against L0's 2 / 2 = 1; L2 is empty, so the pick moves a file.
    List<FileMeta> l1 =
        new ArrayList<>(
            Arrays.asList(file("a", "c", 4000), file("d", "f", 4000), file("g", "i", 4000)));
    Compaction c =
        new CompactionPicker(config("score_priority"))
            .pick(version(mem, levels(l0, l1)), 0, 0, ALL);
    assertEquals(1, c.inputLevel());

    // L0 at 12 files scores 6 and beats L1 again.
    List<FileMeta> crowded = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      crowded.add(file("a", "z", 10));
    }
    Compaction l0First =
        new CompactionPicker(config("score_priority"))
            .pick(version(mem, levels(crowded, l1)), 0, 0, ALL);
    assertEquals(0, l0First.inputLevel());

    // The shallowest-level policies keep L0 first.
    Compaction minOverlap =
        new CompactionPicker(config("min_overlap")).pick(version(mem, levels(l0, l1)), 0, 0, ALL);
    assertEquals(0, minOverlap.inputLevel());
  }

  /** A file of buckets {@code loBucket}..{@code hiBucket}: keys start with the bucket. */
  private FileMeta bucketFile(int loBucket, int hiBucket, long size) {
    byte[] lo = {(byte) (loBucket >> 8), (byte) loBucket, 'a'};
    byte[] hi = {(byte) (hiBucket >> 8), (byte) hiBucket, 'z'};
    TableProperties p =
        new TableProperties(10, lo, hi, 1, 0, Long.MAX_VALUE, Collections.emptyMap());
    return new FileMeta(nextNumber++, 0, size, p, null);
  }

  @Test
  void aFileSpanningAGivenUpBucketIsRewrittenNotMoved() {
    Config oneFileLimit =
        config("score_priority").toBuilder().set("compaction.l0-file-limit", 1).build();
    FileMeta l0 = bucketFile(2, 5, 10);
    List<List<FileMeta>> free = levels(new ArrayList<>(Arrays.asList(l0)), new ArrayList<>());
    CompactionPicker picker = new CompactionPicker(oneFileLimit);
    assertEquals(
        Compaction.Kind.TRIVIAL_MOVE,
        picker.pick(version(mem, free), 0, 0, new OwnedBuckets(new int[] {0, 7})).kind());
    Compaction c = picker.pick(version(mem, free), 0, 0, new OwnedBuckets(new int[] {0, 3}));
    assertEquals(Compaction.Kind.MERGE, c.kind(), "buckets 4-5 must not move down unfiltered");
    assertEquals(Arrays.asList(l0), c.inputs());
    // Two owned ranges with a gap between them: the span 2-5 crosses the gap 4.
    OwnedBuckets gap = new OwnedBuckets(new int[] {0, 3, 5, 7});
    assertEquals(Compaction.Kind.MERGE, picker.pick(version(mem, free), 0, 0, gap).kind());
  }

  @Test
  void whenNothingIsDueFilesHoldingGivenUpBucketsAreCleanedUpWhereTheyLie() {
    FileMeta clean = bucketFile(0, 1, 100);
    FileMeta dirty = bucketFile(2, 4, 100);
    FileMeta deep = bucketFile(6, 7, 100);
    List<List<FileMeta>> l =
        levels(
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(clean, dirty)),
            new ArrayList<>(Arrays.asList(deep)));
    OwnedBuckets owned = new OwnedBuckets(new int[] {0, 3, 6, 7});
    Version v = version(mem, l);
    CompactionPicker picker =
        new CompactionPicker(
            config("score_priority").toBuilder()
                .set("compaction.foreign-bucket-cleanup", true)
                .build());
    Compaction c = picker.pick(v, 0, 0, owned);
    assertEquals(Compaction.Kind.CLEANUP, c.kind());
    assertEquals(Arrays.asList(dirty), c.inputs());
    assertEquals(2, c.inputLevel());
    assertEquals(2, c.outputLevel(), "rewritten where it lies");
    Version settled =
        version(
            mem,
            levels(
                new ArrayList<>(),
                new ArrayList<>(),
                new ArrayList<>(),
                new ArrayList<>(Arrays.asList(clean, dirty, deep))));
    Compaction manual = picker.pickManual(settled, 0, 0, owned);
    assertEquals(Compaction.Kind.CLEANUP, manual.kind(), "compactAll cleans a settled tree too");
    assertEquals(Arrays.asList(dirty), manual.inputs());
    assertNull(picker.pick(v, 0, 0, ALL), "nothing to clean when every bucket is owned");
    assertNull(
        picker.pick(v, 0, 0, new OwnedBuckets(new int[] {5, 7, 0, 4})), "adjacent ranges join");
    Config off =
        config("score_priority").toBuilder()
            .set("compaction.foreign-bucket-cleanup", false)
            .build();
    assertNull(new CompactionPicker(off).pick(v, 0, 0, owned), "background cleanup off");
    assertEquals(Arrays.asList(dirty), new CompactionPicker(off).pickCleanup(v, 0, owned).inputs());

    // A file read in place from a snapshot is left alone until the shard owns it.
    CleanupHold hold = new CleanupHold(n -> n == dirty.number());
    assertNull(picker.pick(v, 0, 0, owned, hold), "a held file is not cleaned up");
    assertEquals(
        Arrays.asList(dirty), picker.pickCleanup(v, 0, owned).inputs(), "manual ignores the hold");
    hold.release(Arrays.asList(clean.number()));
    assertNull(picker.pick(v, 0, 0, owned, hold), "releasing another file ends no hold");
    hold.release(Arrays.asList(dirty.number()));
    assertEquals(Arrays.asList(dirty), picker.pick(v, 0, 0, owned, hold).inputs(), "owned now");
  }

  @Test
  void aLoneL0FileWithNothingBelowMovesWithoutRewriting() {
    Config oneFileLimit =
        config("score_priority").toBuilder().set("compaction.l0-file-limit", 1).build();
    FileMeta l0 = file("b", "e", 10);
    List<List<FileMeta>> free = levels(new ArrayList<>(Arrays.asList(l0)), new ArrayList<>());
    Compaction move = new CompactionPicker(oneFileLimit).pick(version(mem, free), 0, 0, ALL);
    assertEquals(Compaction.Kind.TRIVIAL_MOVE, move.kind());
    assertEquals(Arrays.asList(l0), move.inputs());
    assertEquals(1, move.outputLevel());

    FileMeta below = file("d", "k", 10);
    List<List<FileMeta>> covered =
        levels(new ArrayList<>(Arrays.asList(l0)), new ArrayList<>(Arrays.asList(below)));
    Compaction merge = new CompactionPicker(oneFileLimit).pick(version(mem, covered), 0, 0, ALL);
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
    Compaction c = picker.pickManual(version(mem, spread), 0, 0, ALL);
    assertEquals(1, c.inputLevel());
    assertEquals(2, c.outputLevel());
    assertEquals(Compaction.Kind.TRIVIAL_MOVE, c.kind(), "L2 is empty: the file moves down");

    List<List<FileMeta>> settled =
        levels(
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(l1, file("x", "z", 10))));
    assertNull(
        picker.pickManual(version(mem, settled), 0, 0, ALL), "one level already holds it all");
  }

  @Test
  void expiredFilesDropOnlyWithNothingOlderBelowAndNoEarlierMergeAbove() {
    FileMeta expired = file("a", "c", 10, 500);
    List<List<FileMeta>> l =
        levels(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(Arrays.asList(expired)));
    CompactionPicker picker = new CompactionPicker(config("score_priority"));
    Compaction c = picker.pick(version(mem, l), 0, 1000, ALL);
    assertEquals(Compaction.Kind.DROP_EXPIRED, c.kind());
    assertNull(picker.pick(version(mem, l), 0, 400, ALL));
    FileMeta below = file("b", "b", 10);
    List<List<FileMeta>> covered =
        levels(
            new ArrayList<>(),
            new ArrayList<>(Arrays.asList(expired)),
            new ArrayList<>(Arrays.asList(below)));
    assertNull(picker.pick(version(mem, covered), 0, 1000, ALL));
    SkipListMemTable merging = new SkipListMemTable(2, (k, a, b) -> b);
    merging.noteMerge(300);
    assertNull(picker.pick(version(merging, l), 0, 1000, ALL));
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
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 1000, ALL);
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
    Compaction c = new CompactionPicker(config("min_overlap")).pick(version(mem, l), 0, 1000, ALL);
    assertEquals(Compaction.Kind.MERGE, c.kind());
    assertEquals(Collections.singletonList(wide), c.overlaps());
    assertEquals(false, c.bottommost());
  }
}
