package io.cobble.memtable;

/** Folds a newer row delta onto an older row of the same key (family taken from the key). */
@FunctionalInterface
public interface RowCombiner {
  byte[] combine(byte[] key, byte[] older, byte[] newer);
}
