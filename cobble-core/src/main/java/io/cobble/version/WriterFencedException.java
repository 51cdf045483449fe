package io.cobble.version;

import io.cobble.CobbleException;

/**
 * Another writer took over the remote primary volume: this writer may publish nothing more. Unlike
 * a failed upload, retrying cannot help; only the newest writer may change the Db.
 */
public final class WriterFencedException extends CobbleException {
  private static final long serialVersionUID = 1L;

  public WriterFencedException(String message) {
    super(message);
  }
}
