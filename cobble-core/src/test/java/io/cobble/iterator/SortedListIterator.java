package io.cobble.iterator;

import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.List;

/** A sorted in-memory source for iterator tests; records whether it was closed. */
final class SortedListIterator implements KvIterator {
  private final List<byte[][]> entries = new ArrayList<>();
  private int at;
  boolean closed;

  /** Adds an entry; keys must be added in ascending order. */
  SortedListIterator add(byte[] key, byte[] value) {
    if (!entries.isEmpty() && Bytes.compare(entries.get(entries.size() - 1)[0], key) >= 0) {
      throw new IllegalArgumentException("keys must ascend");
    }
    entries.add(new byte[][] {key, value});
    return this;
  }

  @Override
  public void seekToFirst() {
    at = 0;
  }

  @Override
  public void seek(byte[] target) {
    at = 0;
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
