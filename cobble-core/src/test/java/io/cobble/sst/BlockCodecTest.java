package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import net.jpountz.lz4.LZ4Factory;
import org.junit.jupiter.api.Test;

/** Block framing: what is compressed reads back exactly, and framing a block allocates nothing. */
class BlockCodecTest {

  /** Repetitive text with random runs: compressible, but not trivially. */
  private static byte[] block(Random r, int len) {
    byte[] b = new byte[len];
    for (int i = 0; i < len; ) {
      if (r.nextInt(4) == 0) {
        b[i++] = (byte) r.nextInt();
      } else {
        String word = "key-" + r.nextInt(64) + ":value;";
        for (int k = 0; k < word.length() && i < len; k++) {
          b[i++] = (byte) word.charAt(k);
        }
      }
    }
    return b;
  }

  @Test
  void compressedFramesReadBackExactlyAndDecodeWithAnyLz4() {
    Random r = new Random(7);
    for (int round = 0; round < 500; round++) {
      int len = 1 + r.nextInt(r.nextBoolean() ? 300 : 70_000);
      byte[] raw = block(r, len);
      byte[] framed = new byte[BlockCodec.maxFramedLength(len)];
      int n = BlockCodec.frame(raw, len, true, framed);
      int payload = n - BlockHandle.TRAILER_SIZE;
      assertEquals(len, BlockCodec.verify(framed, 0, payload));
      byte[] back = new byte[len];
      BlockCodec.decode(framed, 0, payload, back, len);
      assertArrayEquals(raw, back, "round " + round);
      byte[] direct = new byte[len];
      BlockCodec.decode(ByteBuffer.wrap(framed), 0, payload, direct, len);
      assertArrayEquals(raw, direct, "round " + round);
      if (framed[payload] == BlockCodec.LZ4) {
        // The payload is a standard LZ4 block: lz4-java's reference decoder reads it too.
        byte[] ref = LZ4Factory.safeInstance().fastDecompressor().decompress(framed, 4, len);
        assertArrayEquals(raw, ref, "round " + round);
      } else {
        assertTrue(len <= 64 || payload == len, "raw frames hold the block as it is");
      }
    }
  }

  /** A list row's shape: one batch repeated, so the block is mostly long, overlapping matches. */
  private static byte[] repeatedBatch(Random r, int len, int batchLen) {
    byte[] batch = new byte[batchLen];
    r.nextBytes(batch);
    byte[] b = new byte[len];
    for (int i = 0; i < len; i++) {
      b[i] = batch[i % batchLen];
    }
    return b;
  }

  @Test
  void repeatedBatchesReadBackFromHeapAndDirectBuffers() {
    Random r = new Random(5);
    for (int round = 0; round < 300; round++) {
      int batchLen = 1 + r.nextInt(r.nextBoolean() ? 12 : 2_000);
      int len = 65 + 4 * batchLen + r.nextInt(40_000);
      byte[] raw = repeatedBatch(r, len, batchLen);
      byte[] framed = new byte[BlockCodec.maxFramedLength(len)];
      int n = BlockCodec.frame(raw, len, true, framed);
      int payload = n - BlockHandle.TRAILER_SIZE;
      assertEquals(BlockCodec.LZ4, framed[payload], "round " + round);
      // The frame at an offset of a larger buffer, as in a mapped file or a read-ahead chunk.
      int base = r.nextInt(100);
      ByteBuffer direct = ByteBuffer.allocateDirect(base + n + r.nextInt(100));
      direct.position(base);
      direct.put(framed, 0, n);
      assertEquals(len, BlockCodec.verify(direct, base, payload));
      byte[] fromDirect = new byte[len + r.nextInt(100)];
      BlockCodec.decode(direct, base, payload, fromDirect, len);
      assertArrayEquals(raw, Arrays.copyOf(fromDirect, len), "round " + round);
      byte[] shifted = new byte[base + n];
      System.arraycopy(framed, 0, shifted, base, n);
      byte[] fromHeap = new byte[len];
      BlockCodec.decode(shifted, base, payload, fromHeap, len);
      assertArrayEquals(raw, fromHeap, "round " + round);
    }
  }

  @Test
  void aCorruptPayloadUnderAValidChecksumFailsAsABadBlock() {
    Random r = new Random(9);
    byte[] raw = repeatedBatch(r, 8_000, 900);
    byte[] framed = new byte[BlockCodec.maxFramedLength(raw.length)];
    int payload = BlockCodec.frame(raw, raw.length, true, framed) - BlockHandle.TRAILER_SIZE;
    // Cut the LZ4 sequence short and re-seal the frame: only the decoder can tell.
    int cut = 4 + (payload - 4) / 2;
    framed[cut] = framed[payload];
    Bytes.putInt(framed, cut + 1, Crc.crc32c(framed, 0, cut + 1));
    int rawLen = BlockCodec.verify(framed, 0, cut);
    assertEquals(raw.length, rawLen);
    assertThrows(
        IllegalStateException.class,
        () -> BlockCodec.decode(framed, 0, cut, new byte[rawLen], rawLen));
    ByteBuffer direct = ByteBuffer.allocateDirect(framed.length);
    direct.put(framed).clear();
    assertThrows(
        IllegalStateException.class,
        () -> BlockCodec.decode(direct, 0, cut, new byte[rawLen], rawLen));
  }

  @Test
  void compressibleBlocksAreStoredCompressed() {
    byte[] raw = block(new Random(3), 16 * 1024);
    byte[] framed = new byte[BlockCodec.maxFramedLength(raw.length)];
    int n = BlockCodec.frame(raw, raw.length, true, framed);
    assertEquals(BlockCodec.LZ4, framed[n - BlockHandle.TRAILER_SIZE]);
    assertTrue(n < raw.length / 2, "compressed to " + n);
  }

  @Test
  void framingABlockAllocatesNothing() {
    Random r = new Random(11);
    byte[][] blocks = new byte[16][];
    for (int i = 0; i < blocks.length; i++) {
      blocks[i] = block(r, 4096 + r.nextInt(12 * 1024));
    }
    byte[] framed = new byte[BlockCodec.maxFramedLength(16 * 1024)];
    Runnable frameAll =
        () -> {
          for (int k = 0; k < 100; k++) {
            for (byte[] b : blocks) {
              BlockCodec.frame(b, b.length, true, framed);
            }
          }
        };
    frameAll.run();
    long before = allocated();
    frameAll.run();
    long perBlock = (allocated() - before) / (100L * blocks.length);
    assertTrue(perBlock < 16, perBlock + " bytes allocated per framed block");
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }
}
