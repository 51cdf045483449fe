package io.cobble.compaction;

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

  public Compaction(
      Kind kind,
      int family,
      int inputLevel,
      int outputLevel,
      List<FileMeta> inputs,
      List<FileMeta> overlaps,
      boolean bottommost,
      long dropExpiredBefore) {
    this.kind = kind;
    this.family = family;
    this.inputLevel = inputLevel;
    this.outputLevel = outputLevel;
    this.inputs = inputs;
    this.overlaps = overlaps;
    this.bottommost = bottommost;
    this.dropExpiredBefore = dropExpiredBefore;
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
        + overlaps;
  }
}
