package io.cobble;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes applied together by {@link Db#write}. Each operation is atomic for its key (readers see a
 * row before or after it, never half of it); operations apply in the order added.
 */
public final class WriteBatch {
  /** TTL meaning "use the Config's ttl.default". */
  public static final long DEFAULT_TTL = -1;

  /** TTL meaning "never expires". */
  public static final long NO_TTL = 0;

  enum Kind {
    PUT,
    MERGE,
    DELETE,
    DELETE_ROW
  }

  static final class Op {
    final Kind kind;
    final int bucket;
    final String family;
    final byte[] key;
    final int column;
    final byte[] value;
    final long ttl;

    Op(Kind kind, int bucket, String family, byte[] key, int column, byte[] value, long ttl) {
      this.kind = kind;
      this.bucket = bucket;
      this.family = family;
      this.key = key;
      this.column = column;
      this.value = value;
      this.ttl = ttl;
    }
  }

  final List<Op> ops = new ArrayList<>();

  public WriteBatch put(int bucket, String family, byte[] key, int column, byte[] value) {
    return put(bucket, family, key, column, value, DEFAULT_TTL);
  }

  public WriteBatch put(
      int bucket, String family, byte[] key, int column, byte[] value, long ttlMillis) {
    ops.add(new Op(Kind.PUT, bucket, family, key, column, value, ttlMillis));
    return this;
  }

  public WriteBatch merge(int bucket, String family, byte[] key, int column, byte[] operand) {
    return merge(bucket, family, key, column, operand, DEFAULT_TTL);
  }

  public WriteBatch merge(
      int bucket, String family, byte[] key, int column, byte[] operand, long ttlMillis) {
    ops.add(new Op(Kind.MERGE, bucket, family, key, column, operand, ttlMillis));
    return this;
  }

  public WriteBatch delete(int bucket, String family, byte[] key, int column) {
    ops.add(new Op(Kind.DELETE, bucket, family, key, column, null, 0));
    return this;
  }

  /** Deletes every column of the row. */
  public WriteBatch deleteRow(int bucket, String family, byte[] key) {
    ops.add(new Op(Kind.DELETE_ROW, bucket, family, key, 0, null, 0));
    return this;
  }

  public int size() {
    return ops.size();
  }

  public void clear() {
    ops.clear();
  }
}
