package io.cobble.compaction;

import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import java.util.ArrayList;
import java.util.List;

/** One unit of compaction work on a tree, as chosen by the {@link CompactionPicker}. */
public final class Compaction {
  /** What the job does with its inputs. */
  public enum Kind {
    /** Merge inputs and overlapping output-level files into new files. */
    MERGE,
    /** Move a single file one level down without rewriting it. */
    TRIVIAL_MOVE,
    /** Delete files whose every value has expired, without reading them. */
    DROP_EXPIRED,
    /**
     * Rewrite one file where it lies (same level, same place among L0 files) with only the rows of
     * buckets the shard owns.
     */
    CLEANUP
  }

  private final Kind kind;
  private final int family;
  private final int inputLevel;
  private final int outputLevel;
  private final List<FileMeta> inputs;
  private final List<FileMeta> overlaps;
  private final boolean bottommost;
  private final long dropExpiredBefore;
  private final byte[] lowerBound;
  private final byte[] upperBound;

  public Compaction(
      Kind kind,
      int family,
      int inputLevel,
      int outputLevel,
      List<FileMeta> inputs,
      List<FileMeta> overlaps,
      boolean bottommost,
      long dropExpiredBefore) {
    this(
        kind,
        family,
        inputLevel,
        outputLevel,
        inputs,
        overlaps,
        bottommost,
        dropExpiredBefore,
        null,
        null);
  }

  private Compaction(
      Kind kind,
      int family,
      int inputLevel,
      int outputLevel,
      List<FileMeta> inputs,
      List<FileMeta> overlaps,
      boolean bottommost,
      long dropExpiredBefore,
      byte[] lowerBound,
      byte[] upperBound) {
    this.kind = kind;
    this.family = family;
    this.inputLevel = inputLevel;
    this.outputLevel = outputLevel;
    this.inputs = inputs;
    this.overlaps = overlaps;
    this.bottommost = bottommost;
    this.dropExpiredBefore = dropExpiredBefore;
    this.lowerBound = lowerBound;
    this.upperBound = upperBound;
  }

  /**
   * The part of this merge over keys from {@code from} (inclusive, null: unbounded) to {@code to}
   * (exclusive, null: unbounded), reading only the files that may hold such keys. Its outputs and
   * those of the other parts of a {@link CompactionSplit} together replace this merge's.
   */
  Compaction part(byte[] from, byte[] to) {
    return new Compaction(
        kind,
        family,
        inputLevel,
        outputLevel,
        within(inputs, from, to),
        within(overlaps, from, to),
        bottommost,
        dropExpiredBefore,
        from,
        to);
  }

  private static List<FileMeta> within(List<FileMeta> files, byte[] from, byte[] to) {
    List<FileMeta> in = new ArrayList<>();
    for (FileMeta f : files) {
      if ((from == null || Bytes.compare(f.largest(), from) >= 0)
          && (to == null || Bytes.compare(f.smallest(), to) < 0)) {
        in.add(f);
      }
    }
    return in;
  }

  /** Smallest key this merge covers (inclusive); null when it covers its inputs' whole span. */
  public byte[] lowerBound() {
    return lowerBound;
  }

  /** The key this merge stops before (exclusive); null when it covers its inputs' whole span. */
  public byte[] upperBound() {
    return upperBound;
  }

  public Kind kind() {
    return kind;
  }

  public int family() {
    return family;
  }

  public int inputLevel() {
    return inputLevel;
  }

  public int outputLevel() {
    return outputLevel;
  }

  /** Files of the input level, newest first when the input level is L0. */
  public List<FileMeta> inputs() {
    return inputs;
  }

  /** Files of the output level overlapping the inputs. */
  public List<FileMeta> overlaps() {
    return overlaps;
  }

  /** All files read, newest first. */
  public List<FileMeta> allInputs() {
    List<FileMeta> all = new ArrayList<>(inputs);
    all.addAll(overlaps);
    return all;
  }

  /** No older data for this key range exists below the output level. */
  public boolean bottommost() {
    return bottommost;
  }

  /**
   * Expired values may be dropped only if they expired before this time: now, capped by the oldest
   * merge write time in newer data (such a merge was applied on top of the value).
   */
  public long dropExpiredBefore() {
    return dropExpiredBefore;
  }

  public long inputBytes() {
    long n = 0;
    for (FileMeta f : allInputs()) {
      n += f.size();
    }
    return n;
  }

  @Override
  public String toString() {
    return kind
        + " tree "
        + family
        + " L"
        + inputLevel
        + "->L"
        + outputLevel
        + " "
        + inputs
        + "+"
        + overlaps
        + (lowerBound == null && upperBound == null
            ? ""
            : " [" + hex(lowerBound) + ", " + hex(upperBound) + ")");
  }

  private static String hex(byte[] key) {
    if (key == null) {
      return "*";
    }
    StringBuilder b = new StringBuilder(key.length * 2);
    for (byte x : key) {
      b.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
    }
    return b.toString();
  }
}
