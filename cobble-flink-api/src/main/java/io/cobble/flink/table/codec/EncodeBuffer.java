package io.cobble.flink.table.codec;

import java.util.Arrays;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.binary.BinarySegmentUtils;

/**
 * A growable byte array that row encodings are written into, big-endian like {@link FieldCodec}.
 * Reused across rows by its single owner (a sink writer, a partitioner), so that encoding a row
 * allocates nothing once the array has grown to the largest row.
 */
public final class EncodeBuffer {

  private byte[] bytes;
  private int size;

  public EncodeBuffer(int initialCapacity) {
    bytes = new byte[Math.max(16, initialCapacity)];
  }

  /** The backing array; its first {@link #size} bytes are the content. */
  public byte[] array() {
    return bytes;
  }

  public int size() {
    return size;
  }

  public void clear() {
    size = 0;
  }

  /** A copy of the content. */
  public byte[] toByteArray() {
    return Arrays.copyOf(bytes, size);
  }

  void putByte(int b) {
    ensure(1);
    bytes[size++] = (byte) b;
  }

  void putShort(short v) {
    ensure(2);
    bytes[size++] = (byte) (v >>> 8);
    bytes[size++] = (byte) v;
  }

  void putInt(int v) {
    ensure(4);
    bytes[size++] = (byte) (v >>> 24);
    bytes[size++] = (byte) (v >>> 16);
    bytes[size++] = (byte) (v >>> 8);
    bytes[size++] = (byte) v;
  }

  void putLong(long v) {
    putInt((int) (v >>> 32));
    putInt((int) v);
  }

  void putBytes(byte[] src) {
    ensure(src.length);
    System.arraycopy(src, 0, bytes, size, src.length);
    size += src.length;
  }

  void putSegments(MemorySegment[] segments, int offset, int length) {
    ensure(length);
    BinarySegmentUtils.copyToBytes(segments, offset, bytes, size, length);
    size += length;
  }

  /**
   * Prefixes the bytes written since {@code start} with their length as an unsigned LEB128 varint,
   * moving them up by the varint's size.
   */
  void prefixLength(int start) {
    int length = size - start;
    int varintSize = 1;
    for (int v = length >>> 7; v != 0; v >>>= 7) {
      varintSize++;
    }
    ensure(varintSize);
    System.arraycopy(bytes, start, bytes, start + varintSize, length);
    int at = start;
    int v = length;
    while ((v & ~0x7f) != 0) {
      bytes[at++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    bytes[at] = (byte) v;
    size += varintSize;
  }

  private void ensure(int extra) {
    if (size + extra > bytes.length) {
      bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + extra));
    }
  }
}
