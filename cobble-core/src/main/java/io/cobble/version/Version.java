package io.cobble.version;

import io.cobble.memtable.MemTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a reader sees: the active memtable, immutable memtables (newest first) and every tree's
 * files, plus the value-log files they point into. Immutable; the version set swaps in a new one
 * atomically. Readers pin it with {@link #tryRef()} so files outlive any in-flight read.
 */
public final class Version {
  private final MemTable active;
  private final List<MemTable> immutables;
  private final List<Tree> trees;
  private final Map<Long, Long> vlogSizes;
  private final AtomicInteger refs = new AtomicInteger(1);
  private final VersionSet owner;

  Version(
      VersionSet owner,
      MemTable active,
      List<MemTable> immutables,
      List<Tree> trees,
      Map<Long, Long> vlogSizes) {
    this.owner = owner;
    this.active = active;
    this.immutables = Collections.unmodifiableList(new ArrayList<>(immutables));
    this.trees = Collections.unmodifiableList(new ArrayList<>(trees));
    this.vlogSizes = Collections.unmodifiableMap(new TreeMap<>(vlogSizes));
  }

  public MemTable active() {
    return active;
  }

  /** Immutable memtables, newest first. */
  public List<MemTable> immutables() {
    return immutables;
  }

  public List<Tree> trees() {
    return trees;
  }

  public Tree tree(int family) {
    return trees.get(family);
  }

  /** Live value-log files and their sizes. */
  public Map<Long, Long> vlogSizes() {
    return vlogSizes;
  }

  public Set<Long> vlogs() {
    return vlogSizes.keySet();
  }

  /** Pins this version; fails if it has already been released. */
  public boolean tryRef() {
    while (true) {
      int r = refs.get();
      if (r <= 0) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  public void unref() {
    if (refs.decrementAndGet() == 0) {
      owner.released(this);
    }
  }
}
