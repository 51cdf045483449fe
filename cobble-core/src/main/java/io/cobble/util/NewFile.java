package io.cobble.util;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A local file being written once through a buffer. It is either finished (flushed, optionally
 * fsynced, closed) or abandoned, which deletes it so no partial file outlives its writer.
 */
public final class NewFile {
  private final Path path;
  private final FileOutputStream file;
  private final OutputStream out;
  private boolean finished;

  public NewFile(Path path) throws IOException {
    this.path = path;
    // A name written again gets a new file instead of truncating the old one in place: the old
    // bytes may have a second name (a snapshot's or checkpoint's hard link) that must keep them.
    Files.deleteIfExists(path);
    this.file = new FileOutputStream(path.toFile());
    this.out = new BufferedOutputStream(file, 1 << 16);
  }

  public void write(byte[] bytes) throws IOException {
    out.write(bytes);
  }

  /** Writes {@code len} bytes of {@code bytes} from {@code off}. */
  public void write(byte[] bytes, int off, int len) throws IOException {
    out.write(bytes, off, len);
  }

  /** Flushes, fsyncs when {@code sync}, and closes; a failure leaves the file to abandon. */
  public void finish(boolean sync) throws IOException {
    out.flush();
    if (sync) {
      file.getChannel().force(true);
    }
    out.close();
    finished = true;
  }

  /** Closes and deletes the file unless it was finished. */
  public void abandon() {
    if (!finished) {
      try {
        out.close();
      } catch (IOException ignored) {
        // The file is deleted next; a close failure changes nothing.
      }
      path.toFile().delete();
    }
  }
}
