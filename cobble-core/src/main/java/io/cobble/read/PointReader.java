package io.cobble.read;

import io.cobble.Clock;
import io.cobble.CorruptionException;
import io.cobble.memtable.MemTable;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.sst.BloomFilter;
import io.cobble.sst.Table;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.ColumnsSink;
import io.cobble.util.ValueSink;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionSet;
import java.util.ArrayList;
import java.util.List;

/**
 * Point reads of one shard: folds a key's rows from the newest memtable down the table levels until
 * the requested columns are final. Rows are decoded where they are stored (memtable arena, pinned
 * cached block), so a get allocates only the values it returns; a miss allocates nothing. Callers
 * validate bucket, key and projection first.
 */
public final class PointReader {
  private final VersionSet versions;
  private final Clock clock;
  private final ValueLoader loader;
  private final ThreadLocal<Fold> folds = ThreadLocal.withInitial(Fold::new);
  // The version of a frozen Db (see freeze), read without counting references; null otherwise.
  private volatile Version frozen;

  public PointReader(VersionSet versions, Clock clock, ValueLoader loader) {
    this.versions = versions;
    this.clock = clock;
    this.loader = loader;
  }

  /**
   * Reads {@code v} from now on without taking a reference: the caller guarantees it stays the
   * current version until the Db closes ({@link VersionSet#freeze}). Each get then skips a memtable
   * holding no entry, without counting it as a memtable get: in a Db nothing writes, that count has
   * no next memtable to choose.
   */
  public void freeze(Version v) {
    frozen = v;
  }

  private Version acquire() {
    Version v = frozen;
    return v != null ? v : versions.acquire();
  }

  private void release(Version v) {
    // A reference taken before freeze() is left counted: a frozen version is never released.
    if (v != frozen) {
      v.unref();
    }
  }

  /** The row's (projected) column values, or null when none of them has a live value. */
  public byte[][] get(ColumnLayout layout, int bucket, byte[] key, int[] projection) {
    Version v = acquire();
    try {
      return read(v, layout, bucket, key, projection);
    } finally {
      release(v);
    }
  }

  /** One column's value, or null when it has no live value; callers validate the column. */
  public byte[] getColumn(ColumnLayout layout, int bucket, byte[] key, int column) {
    Version v = acquire();
    try {
      Fold s = folds.get();
      int[] projection = s.single(column);
      if (search(v, s, layout, bucket, key, projection)) {
        return s.acc.toUserColumn(column, now(s.acc, projection), loader);
      }
      return null;
    } finally {
      release(v);
    }
  }

  /**
   * As {@link #getColumn}, handing the value to {@code sink} (once, when there is one; returns
   * whether there was): in place, without a copy, when the newest row holding the column stores it
   * as a plain inline put ({@link RowState#inlinePut}); a copy otherwise.
   */
  public boolean readColumn(
      ColumnLayout layout, int bucket, byte[] key, int column, ValueSink sink) {
    Version v = acquire();
    try {
      Fold s = folds.get();
      int[] projection = s.single(column);
      boolean found;
      s.inPlace(column, sink);
      try {
        found = search(v, s, layout, bucket, key, projection);
      } finally {
        s.inPlace(-1, null);
      }
      if (!found) {
        return false;
      }
      if (s.delivered) {
        return true;
      }
      byte[] value = s.acc.toUserColumn(column, now(s.acc, projection), loader);
      if (value == null) {
        return false;
      }
      sink.accept(value, 0, value.length);
      return true;
    } finally {
      release(v);
    }
  }

  /**
   * As {@link #get}, handing each projected column's value to {@code sink} instead of returning
   * them (returns whether the row has any of them): in place, without a copy, when the newest row
   * of the key holds every projected column as a plain inline put ({@link RowState#inlinePuts});
   * from the folded row's copies otherwise.
   */
  public boolean readColumns(
      ColumnLayout layout, int bucket, byte[] key, int[] projection, ColumnsSink sink) {
    Version v = acquire();
    try {
      Fold s = folds.get();
      boolean found;
      s.inPlace(projection, sink);
      try {
        found = search(v, s, layout, bucket, key, projection);
      } finally {
        s.inPlace(null, null);
      }
      if (!found) {
        return false;
      }
      if (s.delivered) {
        return true;
      }
      boolean expires = s.acc.readsClock(projection);
      if (expires) {
        sink.expiring();
      }
      byte[][] values = s.acc.toUser(projection, expires ? clock.nowMillis() : 0L, loader);
      if (values == null) {
        return false;
      }
      for (int i = 0; i < values.length; i++) {
        if (values[i] != null) {
          sink.accept(i, values[i], 0, values[i].length);
        }
      }
      return true;
    } finally {
      release(v);
    }
  }

  /** As {@link #get} for each key, all read from one version. */
  public List<byte[][]> multiGet(
      ColumnLayout layout, int bucket, List<byte[]> keys, int[] projection) {
    List<byte[][]> out = new ArrayList<>(keys.size());
    Version v = acquire();
    try {
      for (byte[] key : keys) {
        out.add(read(v, layout, bucket, key, projection));
      }
    } finally {
      release(v);
    }
    return out;
  }

  private byte[][] read(Version v, ColumnLayout layout, int bucket, byte[] key, int[] projection) {
    Fold s = folds.get();
    if (!search(v, s, layout, bucket, key, projection)) {
      return null;
    }
    return s.acc.toUser(projection, now(s.acc, projection), loader);
  }

  /** The time to judge expiry at; the clock is read only when the found row's values expire. */
  private long now(RowState row, int[] projection) {
    return row.readsClock(projection) ? clock.nowMillis() : 0L;
  }

  /**
   * Folds the key's rows into {@code s}, newest first, until the projected columns are final or
   * every source was searched; returns whether any row was found.
   */
  private boolean search(
      Version v, Fold s, ColumnLayout layout, int bucket, byte[] key, int[] projection) {
    s.start(layout, loader);
    ByteWriter k = s.key(layout, bucket, key);
    boolean skipEmpty = v == frozen;
    if (probe(v.active(), skipEmpty)
        && v.active().get(k.array(), k.size(), s)
        && s.isFinal(projection)) {
      return true;
    }
    List<MemTable> immutables = v.immutables();
    for (int i = 0; i < immutables.size(); i++) {
      MemTable m = immutables.get(i);
      if (probe(m, skipEmpty) && m.get(k.array(), k.size(), s) && s.isFinal(projection)) {
        return true;
      }
    }
    if (layout.familyId() < v.trees().size()) {
      byte[] sstKey = s.sstKey();
      long hash = BloomFilter.hash(sstKey);
      Tree tree = v.tree(layout.familyId());
      int level0 = tree.level0Count();
      int levels = tree.searchedLevels();
      for (int i = 0; i < level0; i++) {
        FileMeta f = tree.level0Holding(i, sstKey);
        // With no deeper level, the oldest level-0 file is the tree's bottom.
        boolean bottom = levels == 1 && i == level0 - 1;
        if (f != null && s.fold(f, sstKey, hash, bottom) && s.isFinal(projection)) {
          return true;
        }
      }
      for (int level = 1; level < levels; level++) {
        FileMeta f = tree.find(level, sstKey);
        if (f != null && s.fold(f, sstKey, hash, level == levels - 1) && s.isFinal(projection)) {
          return true;
        }
      }
    }
    return s.found;
  }

  private static boolean probe(MemTable m, boolean skipEmpty) {
    return !skipEmpty || m.entryCount() > 0;
  }

  /**
   * One thread's read in progress, reused: the encoded key and the row folded so far. As the sink
   * of memtables and tables it decodes each row it is handed in place, newest first.
   */
  private static final class Fold implements ValueSink {
    /** Table keys up to this length are held in reused arrays of their exact length. */
    private static final int MAX_REUSED_KEY = 256;

    private final ByteWriter key = new ByteWriter(64);
    private final byte[][] sstKeys = new byte[MAX_REUSED_KEY + 1][];
    private final ByteReader reader = new ByteReader();
    final RowState acc = new RowState();
    // One-column projections by column position, for getColumn.
    private int[][] singles = new int[0][];
    private final RowState tmp = new RowState();
    private final Table.GetScratch tables = new Table.GetScratch();
    private ColumnLayout layout;
    private ValueLoader loader;
    boolean found;
    // readColumn's sink and column (null, -1 otherwise), and whether the sink got the value.
    private ValueSink inPlace;
    private int inPlaceColumn = -1;
    // readColumns' sink and projection (null otherwise), with the value spans of a row in place.
    private ColumnsSink inPlaceRow;
    private int[] inPlaceColumns;
    private long[] spans = new long[8];
    boolean delivered;
    // The table whose row is being decoded, for corruption messages; null for a memtable.
    private String table;

    void start(ColumnLayout layout, ValueLoader loader) {
      this.layout = layout;
      this.loader = loader;
      this.found = false;
      this.delivered = false;
      this.table = null;
    }

    void inPlace(int[] projection, ColumnsSink sink) {
      this.inPlaceColumns = projection;
      this.inPlaceRow = sink;
      if (projection != null && projection.length > spans.length) {
        spans = new long[projection.length];
      }
    }

    void inPlace(int column, ValueSink sink) {
      this.inPlaceColumn = column;
      this.inPlace = sink;
    }

    int[] single(int column) {
      if (column >= singles.length) {
        singles = java.util.Arrays.copyOf(singles, column + 1);
      }
      int[] p = singles[column];
      if (p == null) {
        p = new int[] {column};
        singles[column] = p;
      }
      return p;
    }

    /** Encodes the internal key (family id, bucket, user key). */
    ByteWriter key(ColumnLayout layout, int bucket, byte[] userKey) {
      key.reset();
      key.writeByte(layout.familyId() >>> 8);
      key.writeByte(layout.familyId());
      key.writeByte(bucket >>> 8);
      key.writeByte(bucket);
      key.writeBytes(userKey, 0, userKey.length);
      return key;
    }

    /** The key as tables store it (without the family id), in an array of its exact length. */
    byte[] sstKey() {
      int len = key.size() - 2;
      byte[] k;
      if (len > MAX_REUSED_KEY) {
        k = new byte[len];
      } else {
        k = sstKeys[len];
        if (k == null) {
          k = new byte[len];
          sstKeys[len] = k;
        }
      }
      System.arraycopy(key.array(), 2, k, 0, len);
      return k;
    }

    /**
     * Folds {@code f}'s row of the key, if any; {@code bottom}: {@code f} is of the tree's bottom
     * level, whose bloom probes are skipped while they rule out almost nothing ({@link
     * Table.GetScratch#bottomLevel}).
     */
    boolean fold(FileMeta f, byte[] sstKey, long hash, boolean bottom) {
      table = f.table().name();
      tables.bottomLevel(bottom);
      try {
        return f.table().get(sstKey, hash, this, tables);
      } finally {
        table = null;
      }
    }

    @Override
    public void accept(byte[] buf, int off, int len) {
      if (!found && inPlace != null) {
        long at = RowState.inlinePut(layout, buf, off, len, inPlaceColumn);
        if (at != RowState.NOT_INLINE) {
          // The newest row's put is final: hand it over while the bytes are pinned.
          found = true;
          delivered = true;
          inPlace.accept(buf, (int) (at >>> 32), (int) at);
          return;
        }
      }
      if (!found
          && inPlaceRow != null
          && RowState.inlinePuts(layout, buf, off, len, inPlaceColumns, spans)) {
        // The newest row's puts of every projected column are final: hand them over in place.
        found = true;
        delivered = true;
        for (int i = 0; i < inPlaceColumns.length; i++) {
          inPlaceRow.accept(i, buf, (int) (spans[i] >>> 32), (int) spans[i]);
        }
        return;
      }
      try {
        if (!found) {
          acc.decode(layout, buf, off, len, reader);
          found = true;
        } else {
          tmp.decode(layout, buf, off, len, reader);
          acc.mergeOlder(tmp, loader);
        }
      } catch (IllegalStateException | IndexOutOfBoundsException e) {
        if (table == null) {
          throw e;
        }
        throw new CorruptionException(table, "cannot decode row: " + e.getMessage(), e);
      }
    }

    boolean isFinal(int[] projection) {
      return found && (delivered || acc.isFinal(projection));
    }
  }
}
