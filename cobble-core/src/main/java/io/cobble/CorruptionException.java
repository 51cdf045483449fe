package io.cobble;

import java.nio.file.Path;

/**
 * Persisted data failed a checksum or could not be decoded. Always names the file, so operators
 * know what to restore; the engine never returns data it could not verify.
 */
public class CorruptionException extends CobbleException {
  private final Path file;

  public CorruptionException(Path file, String detail) {
    super("corruption in " + file + ": " + detail);
    this.file = file;
  }

  public CorruptionException(Path file, String detail, Throwable cause) {
    super("corruption in " + file + ": " + detail, cause);
    this.file = file;
  }

  public Path file() {
    return file;
  }
}
