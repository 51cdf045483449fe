package io.cobble.merge;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The public list format used by list-append columns: each element is a varint length followed by
 * its bytes, so appending is byte concatenation.
 */
public final class ListCodec {
  private ListCodec() {}

  public static byte[] encode(List<byte[]> elements) {
    ByteWriter w = new ByteWriter(64);
    for (byte[] e : elements) {
      w.writeLengthPrefixed(e);
    }
    return w.toByteArray();
  }

  public static byte[] element(byte[] element) {
    ByteWriter w = new ByteWriter(element.length + 5);
    w.writeLengthPrefixed(element);
    return w.toByteArray();
  }

  public static List<byte[]> decode(byte[] list) {
    List<byte[]> out = new ArrayList<>();
    ByteReader r = new ByteReader(list);
    while (r.hasRemaining()) {
      out.add(r.readLengthPrefixed());
    }
    return out;
  }
}
