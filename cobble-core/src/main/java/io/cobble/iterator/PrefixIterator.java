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
  // Reused for seek targets: prefix followed by the caller's target.
  private byte[] target;

  public PrefixIterator(KvIterator inner, byte[] prefix) {
    this.inner = inner;
    this.prefix = prefix;
    this.target = Arrays.copyOf(prefix, prefix.length);
  }

  @Override
  public void seekToFirst() {
    inner.seek(prefix);
  }

  @Override
  public void seek(byte[] target) {
    int length = prefix.length + target.length;
    if (this.target.length != length) {
      this.target = Arrays.copyOf(prefix, length);
    }
    System.arraycopy(target, 0, this.target, prefix.length, target.length);
    inner.seek(this.target);
  }

  @Override
  public boolean valid() {
    return inner.valid()
        && inner.keyLength() >= prefix.length
        && Bytes.compare(
                inner.keyArray(), inner.keyOffset(), prefix.length, prefix, 0, prefix.length)
            == 0;
  }

  @Override
  public void next() {
    inner.next();
  }

  @Override
  public byte[] key() {
    int from = inner.keyOffset() + prefix.length;
    return Arrays.copyOfRange(inner.keyArray(), from, inner.keyOffset() + inner.keyLength());
  }

  @Override
  public byte[] value() {
    return inner.value();
  }

  @Override
  public byte[] keyArray() {
    return inner.keyArray();
  }

  @Override
  public int keyOffset() {
    return inner.keyOffset() + prefix.length;
  }

  @Override
  public int keyLength() {
    return inner.keyLength() - prefix.length;
  }

  @Override
  public byte[] valueArray() {
    return inner.valueArray();
  }

  @Override
  public int valueOffset() {
    return inner.valueOffset();
  }

  @Override
  public int valueLength() {
    return inner.valueLength();
  }

  @Override
  public void close() {
    inner.close();
  }
}
