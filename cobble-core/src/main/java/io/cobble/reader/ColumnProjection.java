package io.cobble.reader;

import io.cobble.ReadOptions;
import io.cobble.ScanOptions;
import io.cobble.util.ColumnsSink;

/**
 * A column projection over a shard whose family may have fewer columns than requested (a shard
 * written before columns were appended to its schema): requested columns the shard does not have
 * read as absent (null) instead of failing, so one projection serves every shard of a snapshot.
 */
final class ColumnProjection {
  private final int[] requested;
  private final int[] present;
  private final ReadOptions readOptions;

  private ColumnProjection(int[] requested, int[] present) {
    this.requested = requested;
    this.present = present;
    this.readOptions = present.length == 0 ? null : ReadOptions.columns(present);
  }

  /** {@code requested} over a family of {@code columnCount} columns. */
  static ColumnProjection of(int[] requested, int columnCount) {
    int n = 0;
    for (int c : requested) {
      if (c < columnCount) {
        n++;
      }
    }
    if (n == requested.length) {
      return new ColumnProjection(requested, requested);
    }
    int[] present = new int[n];
    int i = 0;
    for (int c : requested) {
      if (c < columnCount) {
        present[i++] = c;
      }
    }
    return new ColumnProjection(requested, present);
  }

  /** Whether the shard has none of the requested columns (so no row has a value for them). */
  boolean empty() {
    return present.length == 0;
  }

  ReadOptions readOptions() {
    return readOptions;
  }

  ScanOptions scanOptions(ScanOptions options) {
    return options.columns(present);
  }

  /** The columns to read from the shard: the requested ones it has. */
  int[] present() {
    return present;
  }

  /**
   * {@code sink} for a read of {@link #present()}, handing each value on with its index in the
   * requested columns: {@code sink} itself when the shard has them all.
   */
  ColumnsSink toRequested(ColumnsSink sink) {
    if (present == requested) {
      return sink;
    }
    return new ColumnsSink() {
      @Override
      public void accept(int index, byte[] buf, int off, int len) {
        int column = present[index];
        for (int k = 0; k < requested.length; k++) {
          if (requested[k] == column) {
            sink.accept(k, buf, off, len);
            return;
          }
        }
      }

      @Override
      public void expiring() {
        sink.expiring();
      }
    };
  }

  /** The values of the read columns placed at the requested positions, null for missing ones. */
  byte[][] expand(byte[][] values) {
    if (values == null || present == requested) {
      return values;
    }
    byte[][] out = new byte[requested.length][];
    int i = 0;
    for (int k = 0; k < requested.length; k++) {
      if (i < present.length && present[i] == requested[k]) {
        out[k] = values[i++];
      }
    }
    return out;
  }
}
