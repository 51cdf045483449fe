package io.cobble.flink.table.source;

import io.cobble.flink.table.codec.EncodeBuffer;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.ProjectedRowDecoder;
import io.cobble.flink.table.codec.RowProjection;
import org.apache.flink.table.data.RowData;

/**
 * One lookup thread's encoded probe key and row decoder, reused from probe to probe: the engine
 * takes a key as an array of its exact length, so keys up to {@link #MAX_REUSED} bytes are copied
 * into one reused array per length (a table's keys have few distinct lengths; a fixed-width key has
 * one).
 */
final class ProbeKeyBuffer {

  static final int MAX_REUSED = 256;

  private final EncodeBuffer buffer = new EncodeBuffer(32);
  private final byte[][] byLength = new byte[MAX_REUSED + 1][];
  private ProjectedRowDecoder rows;

  /** This thread's decoder of {@code projection}'s rows (a lookup function has one projection). */
  ProjectedRowDecoder rows(RowProjection projection) {
    if (rows == null) {
      rows = projection.newRowDecoder();
    }
    return rows;
  }

  /**
   * The probe's key as {@code keys} encodes it, in an array that the next call on this buffer
   * overwrites.
   */
  byte[] encode(KeyEncoder keys, RowData probe) {
    keys.encodeInto(probe, buffer);
    int length = buffer.size();
    if (length > MAX_REUSED) {
      return buffer.toByteArray();
    }
    byte[] key = byLength[length];
    if (key == null) {
      key = new byte[length];
      byLength[length] = key;
    }
    System.arraycopy(buffer.array(), 0, key, 0, length);
    return key;
  }
}
