package io.cobble.iterator;

import java.io.Closeable;

/**
 * Sorted key/value cursor shared by memtables, blocks, tables and merged views.
 *
 * <p>{@link #key()} and {@link #value()} return copies the caller may keep. Merging readers use the
 * in-place views instead ({@link #keyArray()} with {@link #keyOffset()} and {@link #keyLength()},
 * likewise for the value): they read the iterator's own buffers, valid until it moves, and must not
 * be modified. The defaults copy; every engine iterator overrides them.
 */
public interface KvIterator extends Closeable {
  void seekToFirst();

  /** Positions at the first key greater than or equal to {@code target}. */
  void seek(byte[] target);

  boolean valid();

  void next();

  byte[] key();

  byte[] value();

  /** The array holding the current key, from {@link #keyOffset()} for {@link #keyLength()}. */
  default byte[] keyArray() {
    return key();
  }

  default int keyOffset() {
    return 0;
  }

  default int keyLength() {
    return keyArray().length;
  }

  /**
   * The array holding the current value, from {@link #valueOffset()} for {@link #valueLength()}.
   */
  default byte[] valueArray() {
    return value();
  }

  default int valueOffset() {
    return 0;
  }

  default int valueLength() {
    return valueArray().length;
  }

  /**
   * How many leading bytes the current key shares with the key this iterator stood on before its
   * last {@link #next()}; 0 when unknown, and after a seek. A reader that knows how the previous
   * key compared with a bound skips comparing a key that shares enough of it.
   */
  default int sharedWithPrevious() {
    return 0;
  }

  /**
   * Whether the iterator stands on an entry, and if so describes it in {@code to}: what {@link
   * #valid()} and the in-place accessors with {@link #sharedWithPrevious()} give, in one call.
   */
  default boolean currentInto(KvEntry to) {
    if (!valid()) {
      return false;
    }
    to.set(
        keyArray(),
        keyOffset(),
        keyLength(),
        sharedWithPrevious(),
        valueArray(),
        valueOffset(),
        valueLength());
    return true;
  }

  /** {@link #next()}, then {@link #currentInto}. */
  default boolean nextInto(KvEntry to) {
    next();
    return currentInto(to);
  }

  @Override
  void close();
}
