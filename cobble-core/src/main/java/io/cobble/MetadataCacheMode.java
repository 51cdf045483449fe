package io.cobble;

import io.cobble.util.EnumOption;

/**
 * When decoded SST metadata (the index and filter blocks {@code sst.pinned-metadata.*} pins) is
 * built, selected with {@code sst.read-metadata-cache.mode}.
 */
public enum MetadataCacheMode {
  /** Decoded when a table opens: the first reads pay nothing, opening pays for every table. */
  EAGER,
  /**
   * Decoded on a table's first point read, then kept: opening (restore in place, read-only opens
   * over many files) reads only footers, properties and top-level indexes.
   */
  LAZY,
  /**
   * Nothing is kept outside the block cache: index and filter blocks are read through it like data
   * blocks, whatever {@code sst.pinned-metadata.*} says.
   */
  OFF;

  public static MetadataCacheMode parse(String key, String text) {
    return EnumOption.parse(MetadataCacheMode.class, key, text);
  }
}
