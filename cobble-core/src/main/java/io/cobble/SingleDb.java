package io.cobble;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;

/**
 * A Db with one bucket and one column family ("default", one column): a plain sorted key-value
 * store for embedding and benchmarks. Use {@link #db()} for the full API.
 */
public final class SingleDb implements AutoCloseable {
  private static final String FAMILY = "default";
  private final Db db;

  private SingleDb(Db db) {
    this.db = db;
  }

  /** Opens a single-bucket store; {@code total-buckets} must be 1 (the default). */
  public static SingleDb open(Path dir, Config config) {
    if (config.totalBuckets() != 1) {
      throw new IllegalArgumentException(
          "invalid total-buckets " + config.totalBuckets() + " for SingleDb: it must be 1");
    }
    return new SingleDb(Db.open(dir, config));
  }

  public void put(byte[] key, byte[] value) {
    db.put(0, FAMILY, key, 0, value);
  }

  public void put(byte[] key, byte[] value, long ttlMillis) {
    db.put(0, FAMILY, key, 0, value, ttlMillis);
  }

  public void delete(byte[] key) {
    db.delete(0, FAMILY, key, 0);
  }

  /** The value, or null. */
  public byte[] get(byte[] key) {
    byte[][] row = db.get(0, FAMILY, key);
    return row == null ? null : row[0];
  }

  /** Entries with keys in {@code [start, end)} (null = unbounded); close the cursor when done. */
  public Cursor scan(byte[] start, byte[] end) {
    return new Cursor(db.scan(0, FAMILY, start, end, ScanOptions.DEFAULT));
  }

  public void flush() {
    db.flush();
  }

  public DbMetrics metrics() {
    return db.metrics();
  }

  public Db db() {
    return db;
  }

  @Override
  public void close() {
    db.close();
  }

  /** Key/value iterator over a scan. */
  public static final class Cursor implements Iterator<Map.Entry<byte[], byte[]>>, AutoCloseable {
    private final ScanCursor inner;

    Cursor(ScanCursor inner) {
      this.inner = inner;
    }

    @Override
    public boolean hasNext() {
      return inner.hasNext();
    }

    @Override
    public Map.Entry<byte[], byte[]> next() {
      Row r = inner.next();
      return new java.util.AbstractMap.SimpleImmutableEntry<>(r.key(), r.column(0));
    }

    @Override
    public void close() {
      inner.close();
    }
  }
}
