package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.memtable.MemTable;
import io.cobble.schema.Schema;
import io.cobble.sst.MemoryOnlyReads;
import io.cobble.storage.DataFile;
import io.cobble.vlog.ValueLogFile;
import io.cobble.vlog.ValueLogReader;
import io.cobble.vlog.ValuePointer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns the current {@link Version}, the manifest and the lifetime of data files. Versions hold
 * references on tables and value logs; a file whose count drops to zero is closed and deleted.
 * {@link #apply} must be called under the Db's mutex; readers only call {@link #acquire()}.
 *
 * <p>The previous manifest stays on disk as the fallback for a corrupt newest one, so it must stay
 * whole: a dead file that the previous manifest still references is closed at once but deleted only
 * when a newer manifest replaces that one as the previous (deletion deferred by one manifest
 * generation).
 */
public final class VersionSet {
  private final Path dir;
  private final int totalBuckets;
  private final int maxLevels;
  private final AtomicLong nextFileNumber;
  private final long vlogBase =
      java.util.concurrent.ThreadLocalRandom.current().nextLong(1, 1L << 31) << 32;
  private final boolean sync;
  private final Map<Long, AtomicInteger> vlogRefs = new ConcurrentHashMap<>();
  private final Map<Long, ValueLogReader> vlogReaders = new ConcurrentHashMap<>();
  // Files used where they lie on a snapshot volume (restore in place, local or remote): never
  // deleted by the Db, whose snapshot manager collects them once no snapshot references them; the
  // file ownership hears when the Db no longer needs one.
  private final Map<Long, DataFile> external = new ConcurrentHashMap<>();
  private final ExecutorService deleter =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "cobble-file-deleter");
            t.setDaemon(true);
            return t;
          });
  private volatile Version current;
  // Set by freeze(): from then on the current version never changes.
  private volatile boolean frozen;
  private volatile Schema schema;
  private long manifestSeq;
  private volatile boolean closing;
  // Guarded by fallbackLock: files the previous manifest references, and dead files kept for it.
  private final Object fallbackLock = new Object();
  private Set<Long> previousManifestFiles = new HashSet<>();
  private Set<Long> newestManifestFiles = new HashSet<>();
  // Dead file number to whether it is a value log.
  private final Map<Long, Boolean> deferred = new HashMap<>();
  // Working files on a remote primary volume; null when they live in dir.
  private final RemotePrimary remote;
  private volatile FileOwnership ownership = FileOwnership.DB_OWNS_ALL;

  public VersionSet(
      Path dir,
      int totalBuckets,
      int maxLevels,
      long nextFileNumber,
      long manifestSeq,
      Schema schema,
      boolean sync) {
    this(dir, totalBuckets, maxLevels, nextFileNumber, manifestSeq, schema, sync, null);
  }

  /**
   * A version set whose files and manifests live on {@code remote} (null: in {@code dir}); {@code
   * dir} then only stages new files until they are uploaded.
   */
  public VersionSet(
      Path dir,
      int totalBuckets,
      int maxLevels,
      long nextFileNumber,
      long manifestSeq,
      Schema schema,
      boolean sync,
      RemotePrimary remote) {
    this.remote = remote;
    this.dir = dir;
    this.totalBuckets = totalBuckets;
    this.maxLevels = maxLevels;
    this.nextFileNumber = new AtomicLong(nextFileNumber);
    this.manifestSeq = manifestSeq;
    this.schema = schema;
    this.sync = sync;
  }

  /**
   * Installs the first version (recovered files, fresh memtable) without writing a manifest. {@code
   * previousManifestFiles} are the files the previous manifest on disk references (kept while it is
   * the fallback), {@code previousVlogs} the value logs among them.
   */
  public void initialize(
      MemTable active,
      List<Tree> trees,
      List<ValueLogFile> vlogFiles,
      Set<Long> previousManifestFiles,
      Set<Long> previousVlogs) {
    Map<Long, ValueLogFile> byNumber = new TreeMap<>();
    for (ValueLogFile f : vlogFiles) {
      byNumber.put(f.number(), f);
    }
    Version v = new Version(this, active, new ArrayList<>(), trees, byNumber, liveRefs(trees));
    retain(v);
    current = v;
    synchronized (fallbackLock) {
      this.previousManifestFiles = new HashSet<>(previousManifestFiles);
      this.newestManifestFiles = fileNumbers(v);
      // Files only the fallback lists died before the last writer stopped (its deferred set is
      // gone with it): they go when the next manifest replaces the fallback, like any deferred
      // file.
      for (long n : previousManifestFiles) {
        if (!newestManifestFiles.contains(n) && !external.containsKey(n)) {
          deferred.put(n, previousVlogs.contains(n));
        }
      }
    }
  }

  /** Files the previous manifest references: they must survive until it is replaced. */
  public Set<Long> previousManifestFiles() {
    synchronized (fallbackLock) {
      return new HashSet<>(previousManifestFiles);
    }
  }

  private static Set<Long> fileNumbers(Version v) {
    Set<Long> out = new HashSet<>(v.vlogs());
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        out.add(f.number());
      }
    }
    return out;
  }

  public Path dir() {
    return dir;
  }

  public Schema schema() {
    return schema;
  }

  public Version current() {
    return current;
  }

  /**
   * A number for a new value log. Rows point into logs by number, so rescale cannot renumber logs
   * when it combines shards that descend from one source and count file numbers from the same
   * point; a random high part chosen per open keeps the logs such siblings write apart (rescale
   * still rejects the improbable clash by name).
   */
  public long newVlogNumber() {
    while (true) {
      long n = vlogBase | (newFileNumber() & 0xFFFFFFFFL);
      if (!current.vlogFiles().containsKey(n)) {
        return n;
      }
    }
  }

  public long newFileNumber() {
    return nextFileNumber.getAndIncrement();
  }

  /** The path of a table this Db wrote into its own directory. */
  public Path tablePath(long number) {
    return dir.resolve(String.format("%06d.sst", number));
  }

  /** The path of a value log this Db wrote into its own directory. */
  public Path vlogPath(long number) {
    return dir.resolve(String.format("%06d.vlog", number));
  }

  /** Where a table lies: used in place outside the directory, on the remote primary, or in it. */
  public DataFile tableFile(long number) {
    DataFile f = external.get(number);
    if (f != null) {
      return f;
    }
    return remote != null ? remote.dataFile(number, false) : DataFile.local(tablePath(number));
  }

  /**
   * Where a value log lies: used in place outside the directory, on the remote primary, or in it.
   */
  public DataFile vlogFile(long number) {
    DataFile f = external.get(number);
    if (f != null) {
      return f;
    }
    return remote != null ? remote.dataFile(number, true) : DataFile.local(vlogPath(number));
  }

  /** The remote primary the working files live on; null when they live in {@link #dir()}. */
  public RemotePrimary remote() {
    return remote;
  }

  /** Declares files that live outside the Db directory; call before any version refers to them. */
  public void adoptExternal(Map<Long, DataFile> files) {
    external.putAll(files);
  }

  public boolean isExternal(long number) {
    return external.containsKey(number);
  }

  /** Pins and returns the current version; the caller must {@link Version#unref()} it. */
  public Version acquire() {
    while (true) {
      Version v = current;
      if (v.tryRef()) {
        return v;
      }
    }
  }

  /**
   * Fixes the current version for good and returns it (a read-only Db, which nothing writes,
   * flushes or compacts): readers may then use it without a reference, as none of its files can be
   * deleted before {@link #close()}. Any later {@link #apply} fails. Under Db mutex.
   */
  public Version freeze() {
    frozen = true;
    return current;
  }

  /** Whether {@link #freeze()} fixed the current version. */
  public boolean frozen() {
    return frozen;
  }

  /** Applies an edit; writes the manifest first when durable state changes. Under Db mutex. */
  public Version apply(VersionEdit edit) {
    if (frozen) {
      throw new IllegalStateException("the version of a frozen (read-only) Db cannot change");
    }
    Version cur = current;
    MemTable active = edit.active != null ? edit.active : cur.active();
    List<MemTable> imms = edit.immutables != null ? edit.immutables : cur.immutables();
    Schema s = edit.schema != null ? edit.schema : schema;
    int familySlots = 0;
    for (io.cobble.schema.FamilySchema f : s.families()) {
      familySlots = Math.max(familySlots, f.id() + 1);
    }
    List<Tree> trees = new ArrayList<>();
    for (int fam = 0; fam < familySlots; fam++) {
      Tree t = fam < cur.trees().size() ? cur.tree(fam) : Tree.empty(maxLevels);
      List<FileMeta> removed = new ArrayList<>();
      for (FileMeta f : edit.removed) {
        if (f.family() == fam) {
          removed.add(f);
        }
      }
      List<FileMeta> added = new ArrayList<>();
      List<int[]> levels = new ArrayList<>();
      for (int i = 0; i < edit.added.size(); i++) {
        if (edit.added.get(i).family() == fam) {
          added.add(edit.added.get(i));
          levels.add(edit.addedLevels.get(i));
        }
      }
      trees.add(
          removed.isEmpty() && added.isEmpty()
              ? t
              : t.apply(removed, levels, added, edit.replaced));
    }
    Map<Long, Long> live = liveRefs(trees);
    Map<Long, ValueLogFile> vlogs = new TreeMap<>();
    for (ValueLogFile f : cur.vlogFiles().values()) {
      if (live.containsKey(f.number())) {
        vlogs.put(f.number(), f);
      }
    }
    for (ValueLogFile f : edit.addedVlogs) {
      if (live.containsKey(f.number())) {
        vlogs.put(f.number(), f);
      }
    }
    Version next = new Version(this, active, imms, trees, vlogs, live);
    if (edit.durable()) {
      writeManifest(next, s);
    }
    schema = s;
    retain(next);
    current = next;
    cur.unref();
    return next;
  }

  /** Value-log file number to the pointers live tables hold into it. */
  private static Map<Long, Long> liveRefs(List<Tree> trees) {
    Map<Long, Long> live = new HashMap<>();
    for (Tree t : trees) {
      for (FileMeta f : t.allFiles()) {
        for (Map.Entry<Long, Long> e : f.properties().vlogRefs().entrySet()) {
          live.merge(e.getKey(), e.getValue(), Long::sum);
        }
      }
    }
    return live;
  }

  private void writeManifest(Version v, Schema s) {
    List<Manifest.FileEntry> files = new ArrayList<>();
    for (int fam = 0; fam < v.trees().size(); fam++) {
      Tree t = v.tree(fam);
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          files.add(new Manifest.FileEntry(fam, level, f.number(), f.size(), f.properties()));
        }
      }
    }
    Manifest m =
        new Manifest(
            totalBuckets, nextFileNumber.get(), s, files, new ArrayList<>(v.vlogFiles().values()));
    long seq = manifestSeq + 1;
    if (remote != null) {
      // Counted before the attempt: a publication that failed ambiguously (the pointer may have
      // been written) is retried under a new name, never by rewriting an object readers may see.
      manifestSeq = seq;
      remote.publish(m, seq);
    } else {
      Manifest.writeAtomically(dir.resolve(Manifest.fileName(seq)), m.encode(), sync);
      // The manifest just replaced becomes the fallback; the one before it goes, and with it the
      // claim it had on files that died since.
      try {
        if (manifestSeq > 1) {
          Files.deleteIfExists(dir.resolve(Manifest.fileName(manifestSeq - 1)));
        }
      } catch (IOException e) {
        throw new CobbleException("cannot delete old manifest in " + dir, e);
      }
    }
    manifestSeq = seq;
    Map<Long, Boolean> release = new HashMap<>();
    synchronized (fallbackLock) {
      previousManifestFiles = newestManifestFiles;
      newestManifestFiles = fileNumbers(v);
      deferred
          .entrySet()
          .removeIf(
              e -> {
                if (previousManifestFiles.contains(e.getKey())) {
                  return false;
                }
                release.put(e.getKey(), e.getValue());
                return true;
              });
    }
    if (!release.isEmpty()) {
      try {
        deleter.execute(() -> deleteFiles(release));
      } catch (RejectedExecutionException e) {
        // Closing: the files are swept as orphans on the next open.
      }
    }
  }

  private void retain(Version v) {
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        f.refs.incrementAndGet();
      }
    }
    for (Long n : v.vlogs()) {
      vlogRefs.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
    }
  }

  /**
   * Drops the version's references; files nobody references any more are closed and deleted on the
   * deleter thread, so the reader that happened to release last does not pay for it.
   */
  void released(Version v) {
    if (closing) {
      return;
    }
    List<FileMeta> deadTables = new ArrayList<>();
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        if (f.refs.decrementAndGet() == 0) {
          deadTables.add(f);
        }
      }
    }
    List<Long> deadVlogs = new ArrayList<>();
    for (Long n : v.vlogs()) {
      AtomicInteger r = vlogRefs.get(n);
      if (r != null && r.decrementAndGet() == 0) {
        vlogRefs.remove(n);
        deadVlogs.add(n);
      }
    }
    if (deadTables.isEmpty() && deadVlogs.isEmpty()) {
      return;
    }
    try {
      deleter.execute(
          () -> {
            Map<Long, Boolean> now = new HashMap<>();
            for (FileMeta f : deadTables) {
              f.table().close();
              deleteOwn(f.number(), false, now);
            }
            for (Long n : deadVlogs) {
              ValueLogReader reader = vlogReaders.remove(n);
              if (reader != null) {
                reader.close();
              }
              deleteOwn(n, true, now);
            }
            deleteFiles(now);
          });
    } catch (RejectedExecutionException e) {
      // Closing: the files are swept as orphans on the next open.
    }
  }

  /** Waits until every deletion scheduled so far has happened. */
  public void awaitDeletions() {
    try {
      deleter.submit(() -> {}).get();
    } catch (RejectedExecutionException e) {
      // Already closed: nothing more will be deleted.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new CobbleException("file deletion failed", e.getCause());
    }
  }

  /**
   * Adds a dead own file to {@code now} (to delete at once), or defers it until the previous
   * manifest no longer references it.
   */
  private void deleteOwn(long number, boolean vlog, Map<Long, Boolean> now) {
    synchronized (fallbackLock) {
      if (previousManifestFiles.contains(number)) {
        deferred.put(number, vlog);
        return;
      }
    }
    now.put(number, vlog);
  }

  /** Decides which obsolete files the Db deletes itself; the others it only forgets. */
  public void fileOwnership(FileOwnership ownership) {
    this.ownership = ownership == null ? FileOwnership.DB_OWNS_ALL : ownership;
  }

  /** Deletes own files (number to whether it is a value log), locally or on the remote primary. */
  private void deleteFiles(Map<Long, Boolean> files) {
    FileOwnership owner = ownership;
    // Files read in place elsewhere are never the Db's to delete; their owner may drop them now.
    files
        .entrySet()
        .removeIf(
            f -> {
              DataFile x = external.get(f.getKey());
              if (x != null) {
                owner.externalReleased(f.getKey(), f.getValue(), x);
              }
              return x != null;
            });
    if (owner != FileOwnership.DB_OWNS_ALL) {
      files.entrySet().removeIf(f -> !owner.mayDelete(f.getKey(), f.getValue()));
    }
    if (files.isEmpty()) {
      return;
    }
    if (remote == null) {
      files.forEach((n, vlog) -> deleteQuietly(vlog ? vlogPath(n) : tablePath(n)));
      return;
    }
    try {
      remote.delete(files);
    } catch (IOException | RuntimeException e) {
      // Not deleted (volume unreachable, or this writer was fenced off): the open of the Db's
      // next writer sweeps them as orphans.
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // An undeleted obsolete file is swept as an orphan on the next open.
    }
  }

  /** Reads a separated value; the caller's pinned version keeps the file alive. */
  public byte[] loadValue(byte[] pointer) {
    MemoryOnlyReads.checkMayReadStorage();
    long n = ValuePointer.fileNumber(pointer);
    ValueLogReader r = vlogReaders.computeIfAbsent(n, this::openVlog);
    return r.read(pointer);
  }

  private ValueLogReader openVlog(long number) {
    ValueLogFile f = current.vlogFiles().get(number);
    return new ValueLogReader(vlogFile(number), f != null ? f.size() : -1);
  }

  /** Closes readers without deleting anything (the files stay live in the manifest). */
  public void close() {
    deleter.shutdown();
    try {
      deleter.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closing = true;
    Version v = current;
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        f.table().close();
      }
    }
    for (ValueLogReader r : vlogReaders.values()) {
      r.close();
    }
    vlogReaders.clear();
  }
}
