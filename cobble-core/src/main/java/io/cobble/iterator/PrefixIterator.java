package io.cobble.iterator;

import io.cobble.util.Bytes;
import java.util.Arrays;

/**
 * Views the keys of an iterator that start with {@code prefix}, with the prefix stripped. Used to
 * read one column family out of the shared memtable, whose keys start with the family id.
 */
public final class PrefixIterator implements KvIterator {
  private final KvIterator inner;
  private final byte[] prefix;

  public PrefixIterator(KvIterator inner, byte[] prefix) {
    this.inner = inner;
    this.prefix = prefix;
  }

  private byte[] withPrefix(byte[] key) {
    byte[] k = Arrays.copyOf(prefix, prefix.length + key.length);
    System.arraycopy(key, 0, k, prefix.length, key.length);
    return k;
  }

  @Override
  public void seekToFirst() {
    inner.seek(prefix);
  }

  @Override
  public void seek(byte[] target) {
    inner.seek(withPrefix(target));
  }

  @Override
  public boolean valid() {
    if (!inner.valid()) {
      return false;
    }
    byte[] k = inner.key();
    return k.length >= prefix.length
        && Bytes.compare(k, 0, prefix.length, prefix, 0, prefix.length) == 0;
  }

  @Override
  public void next() {
    inner.next();
  }

  @Override
  public byte[] key() {
    byte[] k = inner.key();
    return Arrays.copyOfRange(k, prefix.length, k.length);
  }

  @Override
  public byte[] value() {
    return inner.value();
  }

  @Override
  public void close() {
    inner.close();
  }
}
