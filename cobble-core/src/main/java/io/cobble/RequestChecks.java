package io.cobble;

import io.cobble.merge.MergeOperator;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;

/** Validation of the arguments of reads and writes, before any state is touched. */
final class RequestChecks {
  private RequestChecks() {}

  static void checkKey(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("key must not be null");
    }
  }

  static int[] checkProjection(ColumnLayout layout, Object options, int[] projection) {
    if (options == null) {
      throw new IllegalArgumentException("read/scan options must not be null (use DEFAULT)");
    }
    if (projection != null) {
      for (int c : projection) {
        layout.checkColumn(c);
      }
    }
    return projection;
  }

  /** One put, merge, delete or row delete. */
  static void checkWrite(
      Layouts l,
      BucketOwnership ownership,
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    ownership.checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = l.require(family);
    if (kind == WriteBatch.Kind.DELETE_ROW) {
      return;
    }
    layout.checkColumn(column);
    if (kind == WriteBatch.Kind.DELETE) {
      return;
    }
    if (value == null) {
      throw new IllegalArgumentException(
          "value must not be null (use delete) for column " + column + " of '" + family + "'");
    }
    if (ttl < WriteBatch.DEFAULT_TTL) {
      throw new IllegalArgumentException(
          "invalid ttl " + ttl + " ms: use a positive ttl, 0 for none or -1 for ttl.default");
    }
    MergeOperator op = layout.operator(column);
    if (kind == WriteBatch.Kind.MERGE) {
      if (op == null) {
        throw new IllegalArgumentException(
            "column "
                + column
                + " of family '"
                + family
                + "' has no merge operator; declare one with ColumnSpec.merging(name, operator)");
      }
      op.validateOperand(value);
    }
  }

  /** The shape of a {@link Db#putRow} call: key length and one column end per column. */
  static void checkRowShape(
      ColumnLayout layout, String family, byte[] key, int keyLen, byte[] values, int[] columnEnds) {
    if (keyLen < 0 || keyLen > key.length) {
      throw new IllegalArgumentException(
          "key length " + keyLen + " outside the key array of " + key.length + " bytes");
    }
    if (values == null || columnEnds == null || columnEnds.length != layout.size()) {
      throw new IllegalArgumentException(
          "putRow needs one column end per column of '"
              + family
              + "' ("
              + layout.size()
              + "), got "
              + (columnEnds == null ? "none" : String.valueOf(columnEnds.length)));
    }
    int start = 0;
    for (int i = 0; i < columnEnds.length; i++) {
      if (columnEnds[i] < start || columnEnds[i] > values.length) {
        throw new IllegalArgumentException(
            "column "
                + i
                + " of '"
                + family
                + "' ends at "
                + columnEnds[i]
                + ", outside "
                + start
                + ".."
                + values.length
                + " of the values array");
      }
      start = columnEnds[i];
    }
  }
}
