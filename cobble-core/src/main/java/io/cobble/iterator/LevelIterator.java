package io.cobble.iterator;

import io.cobble.util.Bytes;
import java.util.List;

/**
 * Concatenates the non-overlapping, sorted files of one level, opening one file at a time. Knows
 * the files only as {@link RunFile}s, so iterators stay below the version layer. One file iterator
 * is reopened from file to file, and {@link #reset} lets a pooled level iterator serve another
 * scan.
 */
public final class LevelIterator implements KvIterator {
  private List<? extends RunFile> files;
  private final int readAhead;
  private int index;
  private KvIterator current;
  // The last file iterator, closed, kept to be reopened over the next file.
  private KvIterator spare;

  public LevelIterator(List<? extends RunFile> files, int readAhead) {
    this.files = files;
    this.readAhead = readAhead;
    this.index = files.size();
  }

  /** Closes this iterator and points it, unpositioned, at another level's files. */
  public LevelIterator reset(List<? extends RunFile> files) {
    close();
    this.files = files;
    this.index = files.size();
    return this;
  }

  private void open(int i) {
    KvIterator previous = current != null ? current : spare;
    boolean previousOpen = current != null;
    current = null;
    spare = null;
    index = i;
    if (i < files.size()) {
      current = files.get(i).iterator(readAhead, previous);
    } else if (previous != null) {
      // The spare is closed already; closing it twice would release its pinned block twice.
      if (previousOpen) {
        previous.close();
      }
      spare = previous;
    }
  }

  private void skipExhausted() {
    while (current != null && !current.valid()) {
      open(index + 1);
      if (current != null) {
        current.seekToFirst();
      }
    }
  }

  @Override
  public void seekToFirst() {
    open(0);
    if (current != null) {
      current.seekToFirst();
    }
    skipExhausted();
  }

  @Override
  public void seek(byte[] target) {
    int lo = 0;
    int hi = files.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Bytes.compare(files.get(mid).largest(), target) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    open(lo);
    if (current != null) {
      current.seek(target);
    }
    skipExhausted();
  }

  @Override
  public boolean valid() {
    return current != null && current.valid();
  }

  @Override
  public void next() {
    current.next();
    skipExhausted();
  }

  @Override
  public boolean currentInto(KvEntry to) {
    return current != null && current.currentInto(to);
  }

  // As the default does, but here the calls inside bind to this class, not to whichever sources the
  // default's shared call sites have seen.
  @Override
  public boolean nextInto(KvEntry to) {
    next();
    return currentInto(to);
  }

  @Override
  public byte[] key() {
    return current.key();
  }

  @Override
  public byte[] value() {
    return current.value();
  }

  @Override
  public byte[] keyArray() {
    return current.keyArray();
  }

  /** The file's count: a key that starts a file shares nothing, as the file's first key. */
  @Override
  public int sharedWithPrevious() {
    return current.sharedWithPrevious();
  }

  @Override
  public int keyOffset() {
    return current.keyOffset();
  }

  @Override
  public int keyLength() {
    return current.keyLength();
  }

  @Override
  public byte[] valueArray() {
    return current.valueArray();
  }

  @Override
  public int valueOffset() {
    return current.valueOffset();
  }

  @Override
  public int valueLength() {
    return current.valueLength();
  }

  @Override
  public void close() {
    if (current != null) {
      current.close();
      spare = current;
      current = null;
    }
  }
}
