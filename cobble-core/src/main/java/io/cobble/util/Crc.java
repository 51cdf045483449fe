package io.cobble.util;

import java.util.zip.CRC32C;

/** CRC32C over byte ranges; one instance per thread avoids allocation on block reads. */
public final class Crc {
  private static final ThreadLocal<CRC32C> LOCAL = ThreadLocal.withInitial(CRC32C::new);

  private Crc() {}

  /** CRC32C of {@code buf}'s remaining bytes; consumes them (position moves to the limit). */
  public static int crc32c(java.nio.ByteBuffer buf) {
    CRC32C c = LOCAL.get();
    c.reset();
    c.update(buf);
    return (int) c.getValue();
  }

  public static int crc32c(byte[] data, int off, int len) {
    CRC32C c = LOCAL.get();
    c.reset();
    c.update(data, off, len);
    return (int) c.getValue();
  }
}
