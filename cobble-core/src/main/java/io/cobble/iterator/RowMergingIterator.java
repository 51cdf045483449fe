package io.cobble.iterator;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import java.util.List;

/**
 * Merges sorted sources of one tree, given newest first, into one row per key: the newest source's
 * row with each older source's row folded underneath ({@link RowState#mergeOlder}).
 */
public final class RowMergingIterator implements AutoCloseable {
  private final KvIterator[] sources;
  private final String[] names;
  private final ColumnLayout layout;
  private final ValueLoader loader;
  private final int[] heap;
  private final byte[][] keys;
  private int heapSize;
  private final ByteReader reader = new ByteReader();
  private RowState row = new RowState();
  private RowState older = new RowState();
  private byte[] key;

  /** {@code names} (same order as sources, entries may be null) label corruption errors. */
  public RowMergingIterator(
      List<KvIterator> sources, List<String> names, ColumnLayout layout, ValueLoader loader) {
    this.sources = sources.toArray(new KvIterator[0]);
    this.names = names.toArray(new String[0]);
    this.layout = layout;
    this.loader = loader;
    this.heap = new int[this.sources.length];
    this.keys = new byte[this.sources.length][];
  }

  private boolean less(int a, int b) {
    int c = Bytes.compare(keys[a], keys[b]);
    return c < 0 || (c == 0 && a < b);
  }

  private void siftUp(int i) {
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!less(heap[i], heap[p])) {
        break;
      }
      int t = heap[i];
      heap[i] = heap[p];
      heap[p] = t;
      i = p;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int l = 2 * i + 1;
      int r = l + 1;
      int m = i;
      if (l < heapSize && less(heap[l], heap[m])) {
        m = l;
      }
      if (r < heapSize && less(heap[r], heap[m])) {
        m = r;
      }
      if (m == i) {
        return;
      }
      int t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
  }

  private void rebuild() {
    heapSize = 0;
    for (int i = 0; i < sources.length; i++) {
      if (sources[i].valid()) {
        keys[i] = sources[i].key();
        heap[heapSize++] = i;
        siftUp(heapSize - 1);
      }
    }
    advance();
  }

  public void seekToFirst() {
    for (KvIterator s : sources) {
      s.seekToFirst();
    }
    rebuild();
  }

  public void seek(byte[] target) {
    for (KvIterator s : sources) {
      s.seek(target);
    }
    rebuild();
  }

  public boolean valid() {
    return key != null;
  }

  public byte[] key() {
    return key;
  }

  /** The combined row at the current key; valid until the next move. */
  public RowState row() {
    return row;
  }

  public void next() {
    advance();
  }

  private void decode(RowState into, int source, byte[] value) {
    try {
      into.decode(layout, value, 0, value.length, reader);
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      String name = names[source];
      throw new CorruptionException(
          name == null ? "<memtable>" : name, "cannot decode row: " + e.getMessage(), e);
    }
  }

  private void advance() {
    if (heapSize == 0) {
      key = null;
      return;
    }
    int top = heap[0];
    key = keys[top];
    boolean first = true;
    while (heapSize > 0 && Bytes.compare(keys[heap[0]], key) == 0) {
      int s = heap[0];
      byte[] value = sources[s].value();
      if (first) {
        decode(row, s, value);
        first = false;
      } else {
        decode(older, s, value);
        row.mergeOlder(older, loader);
      }
      sources[s].next();
      if (sources[s].valid()) {
        keys[s] = sources[s].key();
        siftDown(0);
      } else {
        heap[0] = heap[--heapSize];
        siftDown(0);
      }
    }
  }

  @Override
  public void close() {
    for (KvIterator s : sources) {
      s.close();
    }
  }
}
