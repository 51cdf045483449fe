package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link DecodedIndex#lowerBound} (interpolation guess, doubling bracket, binary search, full-key
 * ties) and its decoded handles, against a sorted set, for keys spread evenly, in dense clusters,
 * tying on the eight compared bytes, and of mixed lengths. Replay a failure with {@code
 * -Dcobble.decoded-index.seed=<seed>}.
 */
class DecodedIndexTest {
  @Test
  void lowerBoundAndHandlesMatchASortedSet() {
    long seed = Long.getLong("cobble.decoded-index.seed", System.nanoTime());
    System.out.println("DecodedIndexTest seed " + seed + " (-Dcobble.decoded-index.seed)");
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 400; round++) {
      int shape = round % 4;
      TreeSet<byte[]> set = new TreeSet<>(Bytes::compare);
      int n = 1 + rnd.nextInt(400);
      while (set.size() < n) {
        set.add(key(shape, rnd));
      }
      List<byte[]> keys = new ArrayList<>(set);
      BlockBuilder builder = new BlockBuilder(1);
      ByteWriter value = new ByteWriter(16);
      for (int i = 0; i < keys.size(); i++) {
        value.reset();
        value.writeVarLong(1000L * i + 7);
        value.writeVarInt(i + 3);
        builder.add(keys.get(i), value.toByteArray());
      }
      DecodedIndex index = DecodedIndex.partition(new Block(builder.finish()));
      String context = "seed " + seed + " round " + round + " shape " + shape;
      assertEquals(keys.size(), index.count(), context);
      for (int i = 0; i < keys.size(); i++) {
        assertEquals(1000L * i + 7, index.dataOffset(i), context);
        assertEquals(i + 3, index.dataSize(i), context);
      }
      List<byte[]> probes = new ArrayList<>(keys);
      for (byte[] k : keys) {
        probes.add(Arrays.copyOf(k, k.length + 1));
        probes.add(Arrays.copyOf(k, rnd.nextInt(k.length + 1)));
      }
      for (int i = 0; i < 300; i++) {
        probes.add(key(shape, rnd));
        probes.add(key(rnd.nextInt(4), rnd));
      }
      for (byte[] probe : probes) {
        byte[] ceiling = set.ceiling(probe);
        int expected = ceiling == null ? keys.size() : set.headSet(ceiling).size();
        assertEquals(
            expected, index.lowerBound(probe), context + " probe " + Arrays.toString(probe));
      }
    }
  }

  /**
   * Shapes: 0 evenly spread numbers after a shared prefix; 1 clusters of near neighbours far apart
   * (uneven for interpolation); 2 keys equal in the eight bytes after the prefix, differing later;
   * 3 random bytes of random length.
   */
  private static byte[] key(int shape, SplittableRandom rnd) {
    switch (shape) {
      case 0:
        {
          byte[] k = new byte[18];
          k[0] = 1;
          Bytes.putLong(k, 2, rnd.nextLong(1L << 40));
          Arrays.fill(k, 10, 18, (byte) 'k');
          return k;
        }
      case 1:
        {
          byte[] k = new byte[12];
          long cluster = rnd.nextInt(3) * (Long.MAX_VALUE / 3);
          Bytes.putLong(k, 0, cluster + rnd.nextInt(64));
          Bytes.putInt(k, 8, rnd.nextInt());
          return k;
        }
      case 2:
        {
          byte[] k = new byte[10 + rnd.nextInt(10)];
          Arrays.fill(k, 0, 10, (byte) 0x55);
          for (int i = 10; i < k.length; i++) {
            k[i] = (byte) rnd.nextInt(4);
          }
          return k;
        }
      default:
        {
          byte[] k = new byte[rnd.nextInt(24)];
          for (int i = 0; i < k.length; i++) {
            k[i] = (byte) (rnd.nextBoolean() ? 0xFF : rnd.nextInt(256));
          }
          return k;
        }
    }
  }
}
