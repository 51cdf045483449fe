package io.cobble.version;

import io.cobble.memtable.MemTable;
import io.cobble.vlog.ValueLogFile;
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
  private final Map<Long, ValueLogFile> vlogs;
  private final Map<Long, Long> vlogLiveRefs;
  private final AtomicInteger refs = new AtomicInteger(1);
  private final int maxL0Files;
  private final VersionSet owner;

  Version(
      VersionSet owner,
      MemTable active,
      List<MemTable> immutables,
      List<Tree> trees,
      Map<Long, ValueLogFile> vlogs,
      Map<Long, Long> vlogLiveRefs) {
    this.owner = owner;
    this.active = active;
    this.immutables = Collections.unmodifiableList(new ArrayList<>(immutables));
    this.trees = Collections.unmodifiableList(new ArrayList<>(trees));
    int maxL0 = 0;
    for (Tree t : trees) {
      maxL0 = Math.max(maxL0, t.level(0).size());
    }
    this.maxL0Files = maxL0;
    this.vlogs = Collections.unmodifiableMap(new TreeMap<>(vlogs));
    this.vlogLiveRefs = Collections.unmodifiableMap(vlogLiveRefs);
  }

  public MemTable active() {
    return active;
  }

  /** Immutable memtables, newest first. */
  public List<MemTable> immutables() {
    return immutables;
  }

  /** Bytes held by the sealed memtables, waiting for their flush. */
  public long sealedBytes() {
    long bytes = 0;
    for (int i = 0; i < immutables.size(); i++) {
      bytes += immutables.get(i).approximateBytes();
    }
    return bytes;
  }

  /** Most L0 files of any tree: part of the write-stall condition. */
  public int maxL0Files() {
    return maxL0Files;
  }

  public List<Tree> trees() {
    return trees;
  }

  public Tree tree(int family) {
    return trees.get(family);
  }

  /** Live value-log files by number. */
  public Map<Long, ValueLogFile> vlogFiles() {
    return vlogs;
  }

  public Set<Long> vlogs() {
    return vlogs.keySet();
  }

  /**
   * Share of a value log's values still referenced by live tables (1 when unknown). Compaction
   * rewrites values out of mostly dead logs so those files can be dropped.
   */
  public double vlogLiveRatio(long number) {
    ValueLogFile f = vlogs.get(number);
    Long live = vlogLiveRefs.get(number);
    if (f == null || live == null || f.entries() == 0) {
      return 1.0;
    }
    return live / (double) f.entries();
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

  /** References held now (for tests). */
  int refCount() {
    return refs.get();
  }

  public void unref() {
    if (refs.decrementAndGet() == 0) {
      owner.released(this);
    }
  }
}
