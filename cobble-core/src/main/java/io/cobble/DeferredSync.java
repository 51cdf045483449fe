package io.cobble;

import io.cobble.version.VersionSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local tables and value logs a shard wrote without fsync ({@code fsync.policy=snapshot}),
 * until {@link #sync} makes the ones a snapshot hands over in place durable. Each file is fsynced
 * at most once; files deleted before anyone asked are forgotten.
 */
final class DeferredSync {
  // Windows cannot open a directory as a channel; NTFS journals directory entries itself.
  private static final boolean DIRECTORIES_SYNCABLE =
      !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");

  private final VersionSet versions;
  // File number -> whether it is a value log.
  private final Map<Long, Boolean> pending = new ConcurrentHashMap<>();
  private static final int MIN_FORGET_AT = 64;
  private final Object forgetLock = new Object();
  private volatile int forgetAt = MIN_FORGET_AT;

  DeferredSync(VersionSet versions) {
    this.versions = versions;
  }

  /**
   * Records a finished file that was not fsynced. A shard whose snapshots copy or link files
   * without asking (a sink's) never calls {@link #sync}, so the files compaction deleted are
   * forgotten here too, whenever the record doubles.
   */
  void written(long number, boolean vlog) {
    pending.put(number, vlog);
    if (pending.size() >= forgetAt) {
      synchronized (forgetLock) {
        if (pending.size() >= forgetAt) {
          forgetDeleted();
          forgetAt = Math.max(MIN_FORGET_AT, 2 * pending.size());
        }
      }
    }
  }

  /** The numbers of the files written and not yet fsynced (live or not yet swept). */
  Set<Long> pending() {
    return new TreeSet<>(pending.keySet());
  }

  /**
   * fsyncs those of {@code numbers} still pending, then once each directory holding them; returns
   * how many files it fsynced.
   */
  synchronized int sync(Iterable<Long> numbers) {
    Set<Path> dirs = new HashSet<>();
    int synced = 0;
    try {
      for (Long n : numbers) {
        Boolean vlog = pending.get(n);
        if (vlog == null) {
          continue;
        }
        Path p = vlog ? versions.vlogPath(n) : versions.tablePath(n);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
          ch.force(true);
        }
        pending.remove(n);
        dirs.add(p.toAbsolutePath().getParent());
        synced++;
      }
      if (DIRECTORIES_SYNCABLE) {
        for (Path d : dirs) {
          try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
            ch.force(true);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fsync the shard's files: " + e.getMessage(), e);
    }
    forgetDeleted();
    return synced;
  }

  // Compaction deletes inputs that no snapshot asked for; their entries would otherwise stay.
  private void forgetDeleted() {
    pending
        .entrySet()
        .removeIf(
            e ->
                !Files.exists(
                    e.getValue() ? versions.vlogPath(e.getKey()) : versions.tablePath(e.getKey())));
  }
}
