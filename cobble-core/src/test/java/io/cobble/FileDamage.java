package io.cobble;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;

/** Reads and damages bytes of files in place, for corruption tests. */
public final class FileDamage {

  private FileDamage() {}

  /** {@code len} bytes of {@code file} from {@code offset}. */
  public static byte[] read(Path file, long offset, int len) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      byte[] b = new byte[len];
      f.seek(offset);
      f.readFully(b);
      return b;
    }
  }

  /** Flips four bits of the byte at {@code offset}. */
  public static void flip(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x5A);
    }
  }

  /** Flips the middle byte; an empty file stays as it is. */
  public static void flipMiddle(Path file) throws IOException {
    long length = file.toFile().length();
    if (length > 0) {
      flip(file, length / 2);
    }
  }
}
