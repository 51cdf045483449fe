package io.cobble.row;

/** Resolves a value-log pointer stored in a row into the value bytes. */
@FunctionalInterface
public interface ValueLoader {
  byte[] load(byte[] pointer);
}
