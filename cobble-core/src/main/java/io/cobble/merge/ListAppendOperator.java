package io.cobble.merge;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;

/**
 * Appends list elements (see {@link ListCodec}). Optional cap on the element count that keeps the
 * first or the last elements (both choices stay associative), and optional per-element expiry: then
 * the stored form prefixes every element with its expiry and reads drop expired elements. Name
 * syntax: {@code list_append[:max=N][,retain=first|last][,element_ttl=true]}.
 */
public final class ListAppendOperator implements MergeOperator {
  public static final String NAME = "list_append";
  private static final ConcatOperator CONCAT = new ConcatOperator();

  private final int maxElements;
  private final boolean retainLast;
  private final boolean elementTtl;

  public ListAppendOperator(int maxElements, boolean retainLast, boolean elementTtl) {
    if (maxElements < 0) {
      throw new IllegalArgumentException("list_append max must be >= 0 (0 = unbounded)");
    }
    this.maxElements = maxElements;
    this.retainLast = retainLast;
    this.elementTtl = elementTtl;
  }

  static ListAppendOperator parse(String name) {
    int max = 0;
    boolean last = true;
    boolean ttl = false;
    int colon = name.indexOf(':');
    if (colon >= 0) {
      for (String kv : name.substring(colon + 1).split(",")) {
        String[] p = kv.trim().split("=", 2);
        String v = p.length == 2 ? p[1].trim() : "";
        switch (p[0].trim()) {
          case "max":
            try {
              max = Integer.parseInt(v);
            } catch (NumberFormatException e) {
              throw badParam(name);
            }
            break;
          case "retain":
            if (!v.equals("first") && !v.equals("last")) {
              throw badParam(name);
            }
            last = v.equals("last");
            break;
          case "element_ttl":
            if (!v.equals("true") && !v.equals("false")) {
              throw badParam(name);
            }
            ttl = v.equals("true");
            break;
          default:
            throw badParam(name);
        }
      }
    }
    return new ListAppendOperator(max, last, ttl);
  }

  private static IllegalArgumentException badParam(String name) {
    return new IllegalArgumentException(
        "invalid list operator '"
            + name
            + "': expected list_append[:max=N][,retain=first|last][,element_ttl=true|false]");
  }

  @Override
  public String name() {
    if (maxElements == 0 && !elementTtl) {
      return NAME;
    }
    return NAME
        + ":max="
        + maxElements
        + ",retain="
        + (retainLast ? "last" : "first")
        + ",element_ttl="
        + elementTtl;
  }

  @Override
  public boolean elementTtl() {
    return elementTtl;
  }

  @Override
  public boolean concatenates() {
    return maxElements == 0;
  }

  @Override
  public void validateOperand(byte[] operand) {
    if (uniform(operand)) {
      return;
    }
    try {
      ByteReader r = new ByteReader(operand);
      while (r.hasRemaining()) {
        r.skip(r.readVarInt());
      }
    } catch (IllegalStateException e) {
      throw new IllegalArgumentException(
          "list_append operand is not a valid list (use ListCodec.element/encode): "
              + e.getMessage());
    }
  }

  /**
   * Whether {@code operand} is a list of elements that all have the first one's length, below 128
   * bytes (one-byte lengths): lists of fixed-size values, the common case, are then checked without
   * walking from length to length (each step's position depends on the length before it), since
   * every element's length byte sits at a known stride.
   */
  static boolean uniform(byte[] operand) {
    if (operand.length == 0) {
      return true;
    }
    int length = operand[0];
    int stride = length + 1;
    if (length < 0 || operand.length % stride != 0) {
      return false;
    }
    for (int p = stride; p < operand.length; p += stride) {
      if (operand[p] != length) {
        return false;
      }
    }
    return true;
  }

  @Override
  public byte[] merge(byte[] older, byte[] newer) {
    if (maxElements == 0) {
      return CONCAT.merge(older, newer);
    }
    int total = count(older) + count(newer);
    if (total <= maxElements) {
      return CONCAT.merge(older, newer);
    }
    int skip = retainLast ? total - maxElements : 0;
    ByteWriter w = new ByteWriter(older.length + newer.length);
    int[] index = {0};
    copy(older, skip, w, index);
    copy(newer, skip, w, index);
    return w.toByteArray();
  }

  private void copy(byte[] list, int skip, ByteWriter w, int[] index) {
    ByteReader r = new ByteReader(list);
    while (r.hasRemaining()) {
      int start = r.position();
      if (elementTtl) {
        r.readVarLong();
      }
      r.skip(r.readVarInt());
      int i = index[0]++;
      if (i >= skip && i < skip + maxElements) {
        w.writeBytes(list, start, r.position() - start);
      }
    }
  }

  private int count(byte[] list) {
    ByteReader r = new ByteReader(list);
    int n = 0;
    while (r.hasRemaining()) {
      if (elementTtl) {
        r.readVarLong();
      }
      r.skip(r.readVarInt());
      n++;
    }
    return n;
  }

  @Override
  public byte[] toStored(byte[] value, long expiryMillis) {
    if (!elementTtl) {
      return value;
    }
    ByteWriter w = new ByteWriter(value.length + 16);
    ByteReader r = new ByteReader(value);
    while (r.hasRemaining()) {
      w.writeVarLong(expiryMillis);
      w.writeLengthPrefixed(r.readLengthPrefixed());
    }
    return w.toByteArray();
  }

  @Override
  public byte[] toUser(byte[] stored, long nowMillis) {
    if (!elementTtl) {
      return stored;
    }
    ByteWriter w = new ByteWriter(stored.length);
    ByteReader r = new ByteReader(stored);
    while (r.hasRemaining()) {
      long expiry = r.readVarLong();
      int len = r.readVarInt();
      int pos = r.position();
      r.skip(len);
      if (expiry == 0 || expiry > nowMillis) {
        w.writeVarInt(len);
        w.writeBytes(stored, pos, len);
      }
    }
    return w.toByteArray();
  }
}
