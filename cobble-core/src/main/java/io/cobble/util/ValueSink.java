package io.cobble.util;

/**
 * Receives a stored value in place (the bytes stay where they are stored and are valid only during
 * the call), so a point read can decode it without copying it first.
 */
@FunctionalInterface
public interface ValueSink {
  void accept(byte[] buf, int off, int len);
}
