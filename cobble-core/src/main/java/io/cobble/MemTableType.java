package io.cobble;

import io.cobble.util.EnumOption;

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
    return EnumOption.parse(MemTableType.class, key, text);
  }
}
