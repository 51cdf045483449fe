package io.cobble.util;

import java.util.zip.CRC32C;

/** CRC32C over byte ranges; one instance per thread avoids allocation on block reads. */
public final class Crc {
  private static final ThreadLocal<CRC32C> LOCAL = ThreadLocal.withInitial(CRC32C::new);

  private Crc() {}

  public static int crc32c(byte[] data, int off, int len) {
    CRC32C c = LOCAL.get();
    c.reset();
    c.update(data, off, len);
    return (int) c.getValue();
  }
}
