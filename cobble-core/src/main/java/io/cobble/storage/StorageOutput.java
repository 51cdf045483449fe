package io.cobble.storage;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A file being written sequentially. {@link #close()} makes the whole file durable and visible; if
 * it throws, the file must be treated as not written.
 */
public abstract class StorageOutput extends OutputStream {

  /**
   * Makes the bytes written so far durable, where the storage can (write-ahead logs need this).
   *
   * @return {@code true} if they are durable now; {@code false} if the storage can only make the
   *     file durable as a whole at {@link #close()} (object stores)
   */
  public abstract boolean sync() throws IOException;

  /** Bytes written so far. */
  public abstract long position();
}
