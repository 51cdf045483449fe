package io.cobble.iterator;

import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A sorted in-memory source for iterator tests; records whether it was closed. */
final class SortedListIterator implements KvIterator {
  private final List<byte[][]> entries = new ArrayList<>();
  private int at;
  // Whether the last move was a next(), after which sharedWithPrevious() reports the true count.
  private boolean stepped;
  boolean closed;

  /** Adds an entry; keys must be added in ascending order. */
  SortedListIterator add(byte[] key, byte[] value) {
    if (!entries.isEmpty() && Bytes.compare(entries.get(entries.size() - 1)[0], key) >= 0) {
      throw new IllegalArgumentException("keys must ascend");
    }
    // The key is also served in place from a larger array, between bytes of 0xFF, as blocks hold
    // keys between other bytes: a merge that reads past a key's end sees them.
    // Values likewise, so a reader that assumes a value starts its array reads the wrong bytes.
    entries.add(
        new byte[][] {key, value, padded(key, padding(key)), padded(value, padding(value))});
    return this;
  }

  private static byte[] padded(byte[] bytes, int padding) {
    byte[] inPlace = new byte[padding + bytes.length + 8];
    Arrays.fill(inPlace, (byte) 0xFF);
    System.arraycopy(bytes, 0, inPlace, padding, bytes.length);
    return inPlace;
  }

  private static int padding(byte[] key) {
    return 1 + key.length % 3;
  }

  @Override
  public byte[] keyArray() {
    return entries.get(at)[2];
  }

  @Override
  public int keyOffset() {
    return padding(entries.get(at)[0]);
  }

  @Override
  public int keyLength() {
    return entries.get(at)[0].length;
  }

  @Override
  public byte[] valueArray() {
    return entries.get(at)[3];
  }

  @Override
  public int valueOffset() {
    return padding(entries.get(at)[1]);
  }

  @Override
  public int valueLength() {
    return entries.get(at)[1].length;
  }

  @Override
  public void seekToFirst() {
    at = 0;
    stepped = false;
  }

  @Override
  public void seek(byte[] target) {
    at = 0;
    stepped = false;
    while (at < entries.size() && Bytes.compare(entries.get(at)[0], target) < 0) {
      at++;
    }
  }

  @Override
  public boolean valid() {
    return at < entries.size();
  }

  @Override
  public void next() {
    at++;
    stepped = true;
  }

  /** Exactly the bytes the current key shares with the previous one, as a block reports them. */
  @Override
  public int sharedWithPrevious() {
    if (!stepped || at == 0 || at >= entries.size()) {
      return 0;
    }
    byte[] previous = entries.get(at - 1)[0];
    byte[] current = entries.get(at)[0];
    int m = Arrays.mismatch(previous, current);
    return m < 0 ? current.length : m;
  }

  @Override
  public byte[] key() {
    return entries.get(at)[0];
  }

  @Override
  public byte[] value() {
    return entries.get(at)[1];
  }

  @Override
  public void close() {
    closed = true;
  }
}
