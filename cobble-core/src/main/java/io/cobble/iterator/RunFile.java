package io.cobble.iterator;

/**
 * One file of a sorted run (a level below L0): the files of a run do not overlap and are ordered by
 * key, so the largest key of each finds the file a seek lands in.
 */
public interface RunFile {
  /** The largest key in the file. */
  byte[] largest();

  /** A new iterator over the file's entries; the caller closes it. */
  KvIterator iterator(int readAhead);

  /**
   * As {@link #iterator(int)}, reusing {@code reuse} (an iterator a run file returned before, open
   * or closed, or null) when it can; it is closed either way.
   */
  KvIterator iterator(int readAhead, KvIterator reuse);
}
