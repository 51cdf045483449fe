package io.cobble.memtable;

import io.cobble.MemTableType;

/** Memtables of every type for tests, with a combiner that makes folds visible. */
final class TestMemTables {
  /** The newer delta is appended to the older row, so the order of a fold shows in the row. */
  static final RowCombiner CONCAT =
      (key, older, newer) -> {
        byte[] out = new byte[older.length + newer.length];
        System.arraycopy(older, 0, out, 0, older.length);
        System.arraycopy(newer, 0, out, older.length, newer.length);
        return out;
      };

  private TestMemTables() {}

  /** A new memtable of {@code type} folding with {@link #CONCAT}. */
  static MemTable create(MemTableType type) {
    switch (type) {
      case SKIPLIST:
        return new SkipListMemTable(1, CONCAT);
      case HASH:
        return new HashMemTable(1, CONCAT);
      case VEC:
        return new VecMemTable(1, CONCAT);
      default:
        return new AdaptiveMemTable(1, CONCAT, MemTableType.VEC);
    }
  }
}
