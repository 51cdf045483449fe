package io.cobble.sst;

import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * On-disk block framing: payload, a type byte (0 raw, 1 LZ4 with a 4-byte uncompressed length
 * prefix) and a CRC32C over payload and type. LZ4 is kept only when it saves at least 1/8.
 */
final class BlockCodec {
  static final byte RAW = 0;
  static final byte LZ4 = 1;
  private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
  private static final LZ4Compressor COMPRESSOR = FACTORY.fastCompressor();
  private static final LZ4SafeDecompressor DECOMPRESSOR = FACTORY.safeDecompressor();

  private BlockCodec() {}

  /** Frames a block, returning payload + trailer. */
  static byte[] frame(byte[] raw, boolean lz4) {
    byte[] payload = raw;
    byte type = RAW;
    if (lz4 && raw.length > 64) {
      int max = COMPRESSOR.maxCompressedLength(raw.length);
      byte[] buf = new byte[4 + max];
      Bytes.putInt(buf, 0, raw.length);
      int n = COMPRESSOR.compress(raw, 0, raw.length, buf, 4, max);
      if (4 + n < raw.length - raw.length / 8) {
        payload = java.util.Arrays.copyOf(buf, 4 + n);
        type = LZ4;
      }
    }
    byte[] out = new byte[payload.length + BlockHandle.TRAILER_SIZE];
    System.arraycopy(payload, 0, out, 0, payload.length);
    out[payload.length] = type;
    Bytes.putInt(out, payload.length + 1, Crc.crc32c(out, 0, payload.length + 1));
    return out;
  }

  /**
   * As {@link #unframe(byte[], int, int)} for a frame held in {@code framed} from index 0 (for
   * example a direct buffer a block was read into). Leaves position and limit unspecified.
   */
  static byte[] unframe(ByteBuffer framed, int payloadSize) {
    int crc = framed.getInt(payloadSize + 1);
    framed.limit(payloadSize + 1).position(0);
    if (Crc.crc32c(framed) != crc) {
      throw new IllegalStateException("block checksum mismatch");
    }
    byte type = framed.get(payloadSize);
    if (type == RAW) {
      byte[] out = new byte[payloadSize];
      framed.limit(payloadSize).position(0);
      framed.get(out);
      return out;
    }
    if (type != LZ4) {
      throw new IllegalStateException("unknown block compression type " + type);
    }
    int rawLen = framed.getInt(0);
    if (rawLen < 0 || rawLen > (1 << 30)) {
      throw new IllegalStateException("bad uncompressed block length " + rawLen);
    }
    byte[] out = new byte[rawLen];
    int n = DECOMPRESSOR.decompress(framed, 4, payloadSize - 4, ByteBuffer.wrap(out), 0, rawLen);
    if (n != rawLen) {
      throw new IllegalStateException("LZ4 block decoded to " + n + " bytes, expected " + rawLen);
    }
    return out;
  }

  /** Verifies and decodes a framed block read from disk; throws IllegalStateException if bad. */
  static byte[] unframe(byte[] framed, int off, int payloadSize) {
    int crc = Bytes.getInt(framed, off + payloadSize + 1);
    if (Crc.crc32c(framed, off, payloadSize + 1) != crc) {
      throw new IllegalStateException("block checksum mismatch");
    }
    byte type = framed[off + payloadSize];
    if (type == RAW) {
      return java.util.Arrays.copyOfRange(framed, off, off + payloadSize);
    }
    if (type != LZ4) {
      throw new IllegalStateException("unknown block compression type " + type);
    }
    int rawLen = Bytes.getInt(framed, off);
    if (rawLen < 0 || rawLen > (1 << 30)) {
      throw new IllegalStateException("bad uncompressed block length " + rawLen);
    }
    byte[] out = new byte[rawLen];
    int n = DECOMPRESSOR.decompress(framed, off + 4, payloadSize - 4, out, 0, rawLen);
    if (n != rawLen) {
      throw new IllegalStateException("LZ4 block decoded to " + n + " bytes, expected " + rawLen);
    }
    return out;
  }
}
