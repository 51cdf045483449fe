package io.cobble.sst;

import io.airlift.compress.MalformedInputException;
import io.airlift.compress.lz4.Lz4Compressor;
import io.airlift.compress.lz4.Lz4Decompressor;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import java.nio.ByteBuffer;

/**
 * On-disk block framing: payload, a type byte (0 raw, 1 LZ4 with a 4-byte uncompressed length
 * prefix) and a CRC32C over payload and type. LZ4 is kept only when it saves at least 1/8.
 */
final class BlockCodec {
  static final byte RAW = 0;
  static final byte LZ4 = 1;

  /**
   * aircompressor's LZ4 keeps its hash table in the compressor, one per thread here. lz4-java's
   * pure-Java compressor, which is what runs once lz4-java is relocated into a dist jar (its JNI
   * binding cannot link there), allocates a 16-KB table per block. Both write the standard LZ4
   * block format.
   */
  private static final ThreadLocal<Lz4Compressor> COMPRESSOR =
      ThreadLocal.withInitial(Lz4Compressor::new);

  /**
   * aircompressor's decoder too (stateless, bounds-checked): lz4-java's pure-Java safe decoder,
   * again what runs relocated, copies a match byte by byte, and list blocks (one batch repeated)
   * are mostly long matches; it was a third of a list compaction's CPU.
   */
  private static final Lz4Decompressor DECOMPRESSOR = new Lz4Decompressor();

  private BlockCodec() {}

  /** The most bytes {@link #frame} writes for a block of {@code rawLen} bytes. */
  static int maxFramedLength(int rawLen) {
    return Math.max(rawLen, 4 + COMPRESSOR.get().maxCompressedLength(rawLen))
        + BlockHandle.TRAILER_SIZE;
  }

  /**
   * Frames the block held in the first {@code rawLen} bytes of {@code raw} into {@code dst} from
   * index 0 ({@link #maxFramedLength} bytes at least), compressing straight from {@code raw}, and
   * returns the length of payload + trailer.
   */
  static int frame(byte[] raw, int rawLen, boolean lz4, byte[] dst) {
    int payload = rawLen;
    byte type = RAW;
    if (lz4 && rawLen > 64) {
      Bytes.putInt(dst, 0, rawLen);
      Lz4Compressor compressor = COMPRESSOR.get();
      int n = compressor.compress(raw, 0, rawLen, dst, 4, compressor.maxCompressedLength(rawLen));
      if (4 + n < rawLen - rawLen / 8) {
        payload = 4 + n;
        type = LZ4;
      }
    }
    if (type == RAW) {
      System.arraycopy(raw, 0, dst, 0, rawLen);
    }
    dst[payload] = type;
    Bytes.putInt(dst, payload + 1, Crc.crc32c(dst, 0, payload + 1));
    return payload + BlockHandle.TRAILER_SIZE;
  }

  /**
   * Verifies a frame held in {@code framed} from index {@code base} (for example a direct buffer a
   * block was read into, or a mapped file) and returns its decoded length; throws
   * IllegalStateException if it is bad. Leaves position and limit of {@code framed} unspecified.
   */
  static int verify(ByteBuffer framed, int base, int payloadSize) {
    int crc = framed.getInt(base + payloadSize + 1);
    framed.limit(base + payloadSize + 1).position(base);
    if (Crc.crc32c(framed) != crc) {
      throw new IllegalStateException("block checksum mismatch");
    }
    return decodedLength(
        framed.get(base + payloadSize), payloadSize, payloadSize >= 4 ? framed.getInt(base) : 0);
  }

  /** As {@link #verify(ByteBuffer, int, int)} for a frame at {@code off} of {@code framed}. */
  static int verify(byte[] framed, int off, int payloadSize) {
    int crc = Bytes.getInt(framed, off + payloadSize + 1);
    if (Crc.crc32c(framed, off, payloadSize + 1) != crc) {
      throw new IllegalStateException("block checksum mismatch");
    }
    int prefix = payloadSize >= 4 ? Bytes.getInt(framed, off) : 0;
    return decodedLength(framed[off + payloadSize], payloadSize, prefix);
  }

  private static int decodedLength(byte type, int payloadSize, int lz4Prefix) {
    if (type == RAW) {
      return payloadSize;
    }
    if (type != LZ4) {
      throw new IllegalStateException("unknown block compression type " + type);
    }
    if (lz4Prefix < 0 || lz4Prefix > (1 << 30)) {
      throw new IllegalStateException("bad uncompressed block length " + lz4Prefix);
    }
    return lz4Prefix;
  }

  /**
   * Decodes a frame {@link #verify verified} to {@code rawLen} bytes from index {@code base} of
   * {@code framed} into {@code dst} from index 0. Leaves position and limit of {@code framed}
   * unspecified.
   */
  static void decode(ByteBuffer framed, int base, int payloadSize, byte[] dst, int rawLen) {
    if (framed.get(base + payloadSize) == RAW) {
      framed.limit(base + payloadSize).position(base);
      framed.get(dst, 0, payloadSize);
      return;
    }
    framed.limit(base + payloadSize).position(base + 4);
    ByteBuffer out = ByteBuffer.wrap(dst, 0, rawLen);
    try {
      DECOMPRESSOR.decompress(framed, out);
    } catch (MalformedInputException e) {
      throw corrupt(e);
    }
    checkDecoded(out.position(), rawLen);
  }

  /**
   * As {@link #decode(ByteBuffer, int, int, byte[], int)} for a frame at {@code off} of {@code
   * framed}.
   */
  static void decode(byte[] framed, int off, int payloadSize, byte[] dst, int rawLen) {
    if (framed[off + payloadSize] == RAW) {
      System.arraycopy(framed, off, dst, 0, payloadSize);
      return;
    }
    int n;
    try {
      n = DECOMPRESSOR.decompress(framed, off + 4, payloadSize - 4, dst, 0, rawLen);
    } catch (MalformedInputException e) {
      throw corrupt(e);
    }
    checkDecoded(n, rawLen);
  }

  private static IllegalStateException corrupt(MalformedInputException e) {
    return new IllegalStateException("corrupt LZ4 block: " + e.getMessage(), e);
  }

  private static void checkDecoded(int n, int rawLen) {
    if (n != rawLen) {
      throw new IllegalStateException("LZ4 block decoded to " + n + " bytes, expected " + rawLen);
    }
  }
}
