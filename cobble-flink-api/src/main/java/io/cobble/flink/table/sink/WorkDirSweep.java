package io.cobble.flink.table.sink;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the working directories that sink writers of dead TaskManagers left in Flink's temporary
 * directories. A writer keeps its shard in {@code <io.tmp.dir>/flink-io-<uuid>/cobble-sink-<uuid>}
 * and deletes it on close; a TaskManager killed with SIGKILL never closes, and its successor gets a
 * new {@code flink-io-} directory, so nothing would ever remove the old shard.
 *
 * <p>A directory is stale when no process holds its Db's {@code LOCK} file and nothing in it
 * changed for {@link #MIN_AGE}. Whether a lock is held is read from {@code /proc/locks}, not by
 * trying to lock: opening and closing the file in a JVM that holds its lock releases that lock
 * (POSIX record locks belong to the process), which would unlock a live Db of this very JVM. Where
 * {@code /proc/locks} does not exist (not Linux), directories with a {@code LOCK} file are kept.
 * The minimum age covers a writer between creating its directory and locking it; a removal holds
 * the lock, so a writer that opens the Db meanwhile fails instead of opening an emptied directory.
 */
final class WorkDirSweep {

  /** How long a directory must have been unlocked and unchanged before it is removed. */
  static final ConfigOption<Duration> MIN_AGE =
      ConfigOptions.key("cobble.sink.stale-dir-min-age")
          .durationType()
          .defaultValue(Duration.ofMinutes(1))
          .withDescription(
              "How long a Cobble sink working directory in io.tmp.dirs must have been unlocked and"
                  + " unchanged before a starting sink writer removes it as stale.");

  static final String PREFIX = "cobble-sink-";
  private static final String FLINK_IO_PREFIX = "flink-io-";
  private static final String LOCK_FILE = "LOCK";
  private static final Path PROC_LOCKS = Paths.get("/proc/locks");
  private static final Logger LOG = LoggerFactory.getLogger(WorkDirSweep.class);

  private final Duration minAge;
  private final Path procLocks;

  WorkDirSweep(Duration minAge, Path procLocks) {
    this.minAge = minAge;
    this.procLocks = procLocks;
  }

  /** A sweep with the minimum age of the TaskManager configuration. */
  static WorkDirSweep of(ReadableConfig taskManagerConfig) {
    return new WorkDirSweep(taskManagerConfig.get(MIN_AGE), PROC_LOCKS);
  }

  /** What one sweep removed. */
  static final class Removed {
    final List<Path> dirs = new ArrayList<>();
    long bytes;
  }

  /**
   * Removes the stale writer directories next to {@code spillingDirs} (this TaskManager's {@code
   * flink-io-} directories): in every {@code flink-io-} directory of their parents. Never throws; a
   * directory that cannot be inspected or removed is kept and reported at WARN.
   */
  Removed sweep(String[] spillingDirs) {
    synchronized (WorkDirSweep.class) {
      Removed removed = new Removed();
      Optional<Set<Long>> lockedInodes = lockedInodes();
      for (Path candidate : candidates(spillingDirs)) {
        try {
          long bytes = removeIfStale(candidate, lockedInodes);
          if (bytes >= 0) {
            removed.dirs.add(candidate);
            removed.bytes += bytes;
            LOG.info(
                "Removed stale Cobble sink working directory {} ({} bytes freed): no process holds"
                    + " its lock and it was unchanged for at least {} ms",
                candidate,
                bytes,
                minAge.toMillis());
          }
        } catch (NoSuchFileException e) {
          LOG.debug("{} was removed by another sweep", candidate);
        } catch (IOException | RuntimeException e) {
          LOG.warn("Could not remove stale Cobble sink working directory {}", candidate, e);
        }
      }
      return removed;
    }
  }

  private static Set<Path> candidates(String[] spillingDirs) {
    Set<Path> roots = new LinkedHashSet<>();
    for (String dir : spillingDirs) {
      Path parent = Paths.get(dir).toAbsolutePath().getParent();
      if (parent != null) {
        roots.add(parent);
      }
    }
    Set<Path> candidates = new LinkedHashSet<>();
    for (Path root : roots) {
      for (Path io : children(root, FLINK_IO_PREFIX)) {
        candidates.addAll(children(io, PREFIX));
      }
    }
    return candidates;
  }

  /**
   * The subdirectories of {@code dir} whose name starts with {@code prefix}; none if unreadable.
   */
  private static List<Path> children(Path dir, String prefix) {
    List<Path> children = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, prefix + "*")) {
      for (Path entry : entries) {
        if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
          children.add(entry);
        }
      }
    } catch (IOException | SecurityException e) {
      LOG.debug("Cannot list {} for stale Cobble sink working directories", dir, e);
    }
    return children;
  }

  /**
   * The inodes of files some process holds a POSIX or flock lock on, or empty when the system does
   * not list them. Only the inode is compared: on overlay filesystems the device in {@code
   * /proc/locks} differs from the one {@code stat} reports, and a false match only keeps a dir.
   */
  private Optional<Set<Long>> lockedInodes() {
    List<String> lines;
    try {
      lines = Files.readAllLines(procLocks);
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
    Set<Long> inodes = new HashSet<>();
    for (String line : lines) {
      for (String field : line.trim().split("\\s+")) {
        int last = field.lastIndexOf(':');
        if (last > 0 && field.indexOf(':') < last) {
          try {
            inodes.add(Long.parseLong(field.substring(last + 1)));
          } catch (NumberFormatException e) {
            // Not the device:inode field.
          }
          break;
        }
      }
    }
    return Optional.of(inodes);
  }

  /** Removes {@code dir} if stale and returns the bytes freed, or -1 if it is kept. */
  private long removeIfStale(Path dir, Optional<Set<Long>> lockedInodes) throws IOException {
    Path lockFile = dir.resolve(LOCK_FILE);
    if (!Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS)) {
      return isOld(dir) ? delete(dir) : -1;
    }
    if (!lockedInodes.isPresent()) {
      return -1;
    }
    Object inode = Files.getAttribute(lockFile, "unix:ino", LinkOption.NOFOLLOW_LINKS);
    if (lockedInodes.get().contains(((Number) inode).longValue()) || !isOld(dir)) {
      // A young directory is never locked here, not even briefly: a writer of this JVM that is
      // just locking its fresh directory would fail on the sweep's lock.
      return -1;
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock()) {
      // Checked while holding the lock: a writer that restores into its new directory writes
      // there right before it locks it, so its directory is never old at this point.
      if (lock == null || !isOld(dir)) {
        return -1;
      }
      return delete(dir);
    } catch (OverlappingFileLockException e) {
      return -1; // another sweep in this JVM holds it
    }
  }

  /** Whether neither {@code dir} nor any file directly in it changed within the minimum age. */
  private boolean isOld(Path dir) throws IOException {
    long newest = lastModified(dir);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        newest = Math.max(newest, lastModified(file));
      }
    }
    return System.currentTimeMillis() - newest >= minAge.toMillis();
  }

  private static long lastModified(Path path) throws IOException {
    return Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS).toMillis();
  }

  /** The number of names of a regular file; 1 where the file system does not say. */
  private static int linkCount(Path file) throws IOException {
    try {
      return (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      return 1;
    }
  }

  /**
   * Deletes {@code dir} with everything in it and returns the bytes this freed: a table the table
   * root also links (a snapshot's hard link) keeps its bytes.
   */
  private static long delete(Path dir) throws IOException {
    long bytes = 0;
    List<Path> paths;
    try (Stream<Path> walk = Files.walk(dir)) {
      paths = new ArrayList<>();
      walk.sorted(Comparator.reverseOrder()).forEach(paths::add);
    }
    for (Path path : paths) {
      BasicFileAttributes attributes =
          Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (attributes.isRegularFile() && linkCount(path) == 1) {
        bytes += attributes.size();
      }
      Files.deleteIfExists(path);
    }
    return bytes;
  }
}
