package io.cobble.vlog;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;

/** Where a separated value lives: value-log file number, record offset and value length. */
public final class ValuePointer {
  private ValuePointer() {}

  public static byte[] encode(long fileNumber, long offset, int length) {
    ByteWriter w = new ByteWriter(20);
    w.writeVarLong(fileNumber);
    w.writeVarLong(offset);
    w.writeVarInt(length);
    return w.toByteArray();
  }

  public static long fileNumber(byte[] pointer) {
    return new ByteReader(pointer).readVarLong();
  }

  static long[] decode(byte[] pointer) {
    ByteReader r = new ByteReader(pointer);
    return new long[] {r.readVarLong(), r.readVarLong(), r.readVarInt()};
  }
}
