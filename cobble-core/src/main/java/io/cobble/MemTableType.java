package io.cobble;

import java.util.Locale;

/** Memtable implementations selectable with {@code memtable.type}. */
public enum MemTableType {
  /** Ordered skiplist: point reads and range scans. */
  SKIPLIST,
  /** Hash index: fastest point reads; scans sort on demand. */
  HASH,
  /** Append-only vector: fastest writes; reads and scans sort on demand. */
  VEC,
  /** Picks one of the others per memtable from the observed operation mix. */
  ADAPTIVE;

  public static MemTableType parse(String key, String text) {
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid value '"
              + text
              + "' for "
              + key
              + ": allowed are skiplist, hash, vec, adaptive");
    }
  }
}
