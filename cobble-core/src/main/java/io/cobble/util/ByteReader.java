package io.cobble.util;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Cursor over a byte range. Decoding errors surface as {@link IllegalStateException} so callers
 * that read persisted data can turn them into corruption errors naming the file.
 */
public final class ByteReader {
  private byte[] buf;
  private int pos;
  private int limit;

  public ByteReader() {}

  public ByteReader(byte[] buf) {
    reset(buf, 0, buf.length);
  }

  public ByteReader(byte[] buf, int off, int len) {
    reset(buf, off, len);
  }

  public ByteReader reset(byte[] buf, int off, int len) {
    this.buf = buf;
    this.pos = off;
    this.limit = off + len;
    return this;
  }

  public byte[] array() {
    return buf;
  }

  public int position() {
    return pos;
  }

  public void position(int p) {
    pos = p;
  }

  public int limit() {
    return limit;
  }

  public boolean hasRemaining() {
    return pos < limit;
  }

  private void need(int n) {
    if (n < 0 || pos + n > limit) {
      throw new IllegalStateException("truncated data: need " + n + " bytes at " + pos);
    }
  }

  public int readByte() {
    need(1);
    return buf[pos++] & 0xFF;
  }

  public int readVarInt() {
    // One-byte varints (lengths in blocks and rows, mostly) skip the general loop.
    if (pos < limit) {
      int b = buf[pos];
      if (b >= 0) {
        pos++;
        return b;
      }
    }
    long v = readVarLong();
    if (v > 0xFFFFFFFFL) {
      throw new IllegalStateException("varint overflow at " + pos);
    }
    return (int) v;
  }

  public long readVarLong() {
    if (pos < limit) {
      int b = buf[pos];
      if (b >= 0) {
        pos++;
        return b;
      }
    }
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      int b = buf[pos++];
      result |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return result;
      }
    }
    throw new IllegalStateException("malformed varint at " + pos);
  }

  public int readInt() {
    need(4);
    int v =
        ((buf[pos] & 0xFF) << 24)
            | ((buf[pos + 1] & 0xFF) << 16)
            | ((buf[pos + 2] & 0xFF) << 8)
            | (buf[pos + 3] & 0xFF);
    pos += 4;
    return v;
  }

  public long readLong() {
    return ((long) readInt() << 32) | (readInt() & 0xFFFFFFFFL);
  }

  public void skip(int n) {
    need(n);
    pos += n;
  }

  public byte[] readBytes(int n) {
    need(n);
    byte[] out = Arrays.copyOfRange(buf, pos, pos + n);
    pos += n;
    return out;
  }

  public byte[] readLengthPrefixed() {
    return readBytes(readVarInt());
  }

  public String readString() {
    return new String(readLengthPrefixed(), StandardCharsets.UTF_8);
  }
}
