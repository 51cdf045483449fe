package io.cobble.iterator;

import java.io.Closeable;

/** Sorted key/value cursor shared by memtables, blocks, tables and merged views. */
public interface KvIterator extends Closeable {
  void seekToFirst();

  /** Positions at the first key greater than or equal to {@code target}. */
  void seek(byte[] target);

  boolean valid();

  void next();

  byte[] key();

  byte[] value();

  @Override
  void close();
}
