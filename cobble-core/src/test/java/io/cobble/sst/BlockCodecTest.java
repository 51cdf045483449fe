package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
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
