package io.cobble;

import java.nio.file.Path;

/**
 * Persisted data failed a checksum or could not be decoded. Always names the file (a local path or
 * a storage URI), so operators know what to restore; the engine never returns data it could not
 * verify.
 */
public class CorruptionException extends CobbleException {
  private final String file;

  public CorruptionException(Path file, String detail) {
    this(String.valueOf(file), detail);
  }

  public CorruptionException(Path file, String detail, Throwable cause) {
    this(String.valueOf(file), detail, cause);
  }

  public CorruptionException(String file, String detail) {
    super("corruption in " + file + ": " + detail);
    this.file = file;
  }

  public CorruptionException(String file, String detail, Throwable cause) {
    super("corruption in " + file + ": " + detail, cause);
    this.file = file;
  }

  /** The damaged file: a local path or a storage URI. */
  public String file() {
    return file;
  }
}
