package io.cobble;

import io.cobble.util.EnumOption;

/** How the compaction picker chooses the input file of a leveled (L1+) compaction. */
public enum CompactionPolicy {
  /** Cycle through each level's key space so every range is compacted in turn. */
  ROUND_ROBIN,
  /** Pick the file that overlaps the fewest bytes in the next level (least write amplification). */
  MIN_OVERLAP,
  /** Compact the level with the highest size/target score first, choosing by min overlap. */
  SCORE_PRIORITY;

  public static CompactionPolicy parse(String key, String text) {
    return EnumOption.parse(CompactionPolicy.class, key, text);
  }
}
