package io.cobble.util;

import java.util.Arrays;

/** Growable byte buffer reused across encodes so hot paths do not allocate per operation. */
public final class ByteWriter {
  private byte[] buf;
  private int pos;

  public ByteWriter(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  public void reset() {
    pos = 0;
  }

  public int size() {
    return pos;
  }

  public byte[] array() {
    return buf;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, pos);
  }

  private void ensure(int extra) {
    int need = pos + extra;
    if (need > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(need, buf.length * 2));
    }
  }

  public void writeByte(int b) {
    ensure(1);
    buf[pos++] = (byte) b;
  }

  public void writeBytes(byte[] src) {
    writeBytes(src, 0, src.length);
  }

  public void writeBytes(byte[] src, int off, int len) {
    ensure(len);
    System.arraycopy(src, off, buf, pos, len);
    pos += len;
  }

  public void writeVarInt(int v) {
    writeVarLong(v & 0xFFFFFFFFL);
  }

  public void writeVarLong(long v) {
    ensure(10);
    while ((v & ~0x7FL) != 0) {
      buf[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[pos++] = (byte) v;
  }

  public void writeInt(int v) {
    ensure(4);
    buf[pos++] = (byte) (v >>> 24);
    buf[pos++] = (byte) (v >>> 16);
    buf[pos++] = (byte) (v >>> 8);
    buf[pos++] = (byte) v;
  }

  public void writeLong(long v) {
    writeInt((int) (v >>> 32));
    writeInt((int) v);
  }

  /** Writes a length-prefixed byte array. */
  public void writeLengthPrefixed(byte[] src) {
    writeVarInt(src.length);
    writeBytes(src);
  }

  public void writeString(String s) {
    writeLengthPrefixed(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
