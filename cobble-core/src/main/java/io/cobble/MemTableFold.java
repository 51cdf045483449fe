package io.cobble;

import io.cobble.memtable.RowCombiner;
import io.cobble.row.ColumnLayout;
import io.cobble.row.ConcatFold;
import io.cobble.row.Layouts;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import java.util.function.Supplier;

/**
 * How a shard's memtables fold a newer row delta onto an older one of the same key, and find
 * whole-row deltas without decoding. Memtable rows never hold value-log pointers.
 */
final class MemTableFold implements RowCombiner {
  private final Supplier<Layouts> layouts;
  private final ValueLoader loader;
  private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

  /** One thread's reused fold state. */
  private static final class Scratch {
    final RowState newer = new RowState();
    final RowState older = new RowState();
    final ConcatFold concat = new ConcatFold();
    final ByteWriter out = new ByteWriter(256);
  }

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
    Scratch s = scratch.get();
    // A list batch onto a list: one copy of each row's bytes, not decode, concatenate and encode.
    if (ConcatFold.applies(layout)
        && s.concat.start(layout, newer, 0, newer.length)
        && s.concat.addOlder(layout, older, 0, older.length)) {
      s.out.reset();
      s.concat.writeTo(s.out);
      return s.out.toByteArray();
    }
    s.newer.decode(layout, newer);
    s.older.decode(layout, older);
    s.newer.mergeOlder(s.older, loader);
    return s.newer.encode();
  }

  @Override
  public boolean replacesOlder(byte[] key, int keyOff, byte[] row, int rowOff, int rowLen) {
    ColumnLayout layout = layouts.get().byId(Bytes.getShort(key, keyOff));
    return layout != null && RowState.replacesOlder(layout, row, rowOff, rowLen);
  }
}
