package io.cobble;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The model's own merge semantics, written from the documented value formats without the production
 * operators, so a wrong operator cannot agree with itself: {@code concat} appends bytes, {@code
 * u64_add}/{@code u32_add} add 8/4-byte big-endian counters with wrap-around, and {@code
 * list_append[:max=N,retain=first|last]} appends elements of a list whose elements are each a
 * LEB128 varint length followed by the bytes, keeping at most N (the first or last) when N > 0.
 */
final class ModelMerges {

  private ModelMerges() {}

  static byte[] u64(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  static byte[] u32(int v) {
    return ByteBuffer.allocate(4).putInt(v).array();
  }

  /** {@code older} combined with the newer operand under {@code operator} (a column's name). */
  static byte[] merge(String operator, byte[] older, byte[] newer) {
    String name = operator.split(":")[0];
    switch (name) {
      case "concat":
        return concat(older, newer);
      case "u64_add":
        return u64(ByteBuffer.wrap(older).getLong() + ByteBuffer.wrap(newer).getLong());
      case "u32_add":
        return u32(ByteBuffer.wrap(older).getInt() + ByteBuffer.wrap(newer).getInt());
      case "list_append":
        List<byte[]> all = listDecode(older);
        all.addAll(listDecode(newer));
        int max = listMax(operator);
        if (max > 0 && all.size() > max) {
          all =
              operator.contains("retain=first")
                  ? all.subList(0, max)
                  : all.subList(all.size() - max, all.size());
        }
        return listEncode(all);
      default:
        throw new AssertionError("the model knows no operator " + operator);
    }
  }

  private static int listMax(String operator) {
    for (String part : operator.substring(operator.indexOf(':') + 1).split(",")) {
      if (part.startsWith("max=")) {
        return Integer.parseInt(part.substring(4));
      }
    }
    return 0;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  static byte[] listEncode(List<byte[]> elements) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] e : elements) {
      int n = e.length;
      while (n >= 0x80) {
        out.write((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      out.write(n);
      out.write(e, 0, e.length);
    }
    return out.toByteArray();
  }

  static List<byte[]> listDecode(byte[] list) {
    List<byte[]> out = new ArrayList<>();
    int at = 0;
    while (at < list.length) {
      int n = 0;
      int shift = 0;
      int b;
      do {
        b = list[at++] & 0xff;
        n |= (b & 0x7f) << shift;
        shift += 7;
      } while (b >= 0x80);
      byte[] e = new byte[n];
      System.arraycopy(list, at, e, 0, n);
      at += n;
      out.add(e);
    }
    return out;
  }
}
