package io.cobble.compaction;

/**
 * Drops values a layer above the engine knows to be dead (Flink's state TTL, for example), or the
 * dead parts of a value, while compaction rewrites them. It only sees values written at the bottom
 * of the tree, where dropping one cannot uncover an older version of the same column.
 */
public interface CompactionFilter {

  /**
   * The filter for one compaction of {@code family}, or null to keep all of its values. Called once
   * per compaction (per key range of a split one, each used by one thread), so a filter may fix the
   * time it compares against here.
   */
  ValueFilter forFamily(String family);

  /** Decides about the values of one compaction. */
  interface ValueFilter {
    /**
     * True drops the value stored in column {@code position} (the whole value, never a pointer).
     */
    boolean drop(int position, byte[] value);

    /**
     * What compaction writes in place of the value stored in column {@code position}: {@code value}
     * itself to keep it, a shorter value holding its live parts (the elements of a list that are
     * not dead), or null to drop it. Defaults to {@link #drop}.
     */
    default byte[] filter(int position, byte[] value) {
      return drop(position, value) ? null : value;
    }
  }
}
