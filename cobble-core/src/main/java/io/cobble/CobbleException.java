package io.cobble;

/** Base class of the engine's runtime failures (I/O, corruption, internal state). */
public class CobbleException extends RuntimeException {
  public CobbleException(String message) {
    super(message);
  }

  public CobbleException(String message, Throwable cause) {
    super(message, cause);
  }
}
