package io.cobble;

import io.cobble.memtable.RowCombiner;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.Bytes;
import java.util.function.Supplier;

/**
 * How a shard's memtables fold a newer row delta onto an older one of the same key, and find
 * whole-row deltas without decoding. Memtable rows never hold value-log pointers.
 */
final class MemTableFold implements RowCombiner {
  private final Supplier<Layouts> layouts;
  private final ValueLoader loader;
  private final ThreadLocal<RowState[]> scratch =
      ThreadLocal.withInitial(() -> new RowState[] {new RowState(), new RowState()});

  MemTableFold(Supplier<Layouts> layouts, ValueLoader loader) {
    this.layouts = layouts;
    this.loader = loader;
  }

  @Override
  public byte[] combine(byte[] key, byte[] older, byte[] newer) {
    ColumnLayout layout = layouts.get().byId(Bytes.getShort(key, 0));
    if (RowState.replacesOlder(layout, newer, 0, newer.length)) {
      // The delta sets every column: nothing of the older row survives.
      return newer;
    }
    RowState[] s = scratch.get();
    s[0].decode(layout, newer);
    s[1].decode(layout, older);
    s[0].mergeOlder(s[1], loader);
    return s[0].encode();
  }

  @Override
  public boolean replacesOlder(byte[] key, int keyOff, byte[] row, int rowOff, int rowLen) {
    ColumnLayout layout = layouts.get().byId(Bytes.getShort(key, keyOff));
    return layout != null && RowState.replacesOlder(layout, row, rowOff, rowLen);
  }
}
