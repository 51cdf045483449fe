package io.cobble.util;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectIoTest {
  @TempDir Path dir;

  @Test
  void unalignedReadsMatchFileContentAndPoolStaysBounded() throws Exception {
    byte[] data = new byte[300_000];
    new Random(3).nextBytes(data);
    Path f = dir.resolve("file");
    Files.write(f, data);
    DirectIo io = new DirectIo(2048, 3);
    DirectIo.Reader r = io.open(f);
    // Temp directories on ext4/xfs support O_DIRECT; tmpfs would return null (and fall back).
    assertNotNull(r, "direct I/O unavailable in " + dir);
    try {
      Random rnd = new Random(4);
      for (int i = 0; i < 2000; i++) {
        int len = 1 + rnd.nextInt(i % 10 == 0 ? 20_000 : 3000);
        int pos = rnd.nextInt(data.length - len);
        byte[] dst = new byte[len];
        assertTrue(r.read(dst, len, pos));
        assertArrayEquals(Arrays.copyOfRange(data, pos, pos + len), dst, "at " + pos);
        assertTrue(io.pooledBuffers() <= 3);
      }
      byte[] tail = new byte[100];
      assertFalse(r.read(tail, 100, data.length - 50));
    } finally {
      r.close();
    }
  }
}
