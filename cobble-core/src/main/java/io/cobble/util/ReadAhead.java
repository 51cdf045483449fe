package io.cobble.util;

import com.sun.jna.Library;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Kernel read-ahead hints for sequential compaction reads: {@code posix_fadvise} through JNA on
 * Linux. Optional at run time: when JNA or libc is unavailable every hint is a no-op and the
 * caller's large sequential reads provide the read-ahead in pure Java.
 */
public final class ReadAhead implements AutoCloseable {
  private static final int O_RDONLY = 0;
  private static final int POSIX_FADV_SEQUENTIAL = 2;
  private static final int POSIX_FADV_WILLNEED = 3;
  private static final ReadAhead NONE = new ReadAhead(-1);

  private final int fd;

  private ReadAhead(int fd) {
    this.fd = fd;
  }

  /** Whether hints reach the kernel in this process. */
  public static boolean nativeAvailable() {
    return Native.LIBC != null;
  }

  /** Opens a hint handle for a file (a no-op handle when hints are unavailable). */
  public static ReadAhead open(Path file) {
    Native.LibC libc = Native.LIBC;
    if (libc == null) {
      return NONE;
    }
    try {
      int fd = libc.open(file.toString(), O_RDONLY);
      if (fd < 0) {
        return NONE;
      }
      libc.posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      return new ReadAhead(fd);
    } catch (Throwable t) {
      return NONE;
    }
  }

  /** Asks the kernel to start reading {@code [offset, offset + length)} into the page cache. */
  public void willNeed(long offset, long length) {
    if (fd >= 0) {
      Native.LIBC.posix_fadvise(fd, offset, length, POSIX_FADV_WILLNEED);
    }
  }

  @Override
  public void close() {
    if (fd >= 0) {
      Native.LIBC.close(fd);
    }
  }

  /** Holds the JNA binding so a missing JNA jar only disables hints. */
  private static final class Native {
    static final LibC LIBC = load();

    interface LibC extends Library {
      int open(String path, int flags);

      int close(int fd);

      int posix_fadvise(int fd, long offset, long length, int advice);
    }

    private static LibC load() {
      if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
        return null;
      }
      try {
        return com.sun.jna.Native.load("c", LibC.class);
      } catch (Throwable t) {
        return null;
      }
    }
  }
}
