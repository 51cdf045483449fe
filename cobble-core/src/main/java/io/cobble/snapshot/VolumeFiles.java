package io.cobble.snapshot;

import io.cobble.CobbleException;
import io.cobble.Db;
import io.cobble.storage.DataFile;
import io.cobble.storage.StorageOutput;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionSet;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where each data file of one shard's Db lies on the snapshot volume: used there in place (listed
 * in the Db's {@link ExternalFiles}), uploaded by an earlier snapshot, or not there yet, in which
 * case {@link #place} uploads it: a hard link where the volume is on the working directory's file
 * system (tables only), a copy otherwise. Uploads are incremental: a file goes to the volume once.
 */
final class VolumeFiles {
  private final Db db;
  private final SnapshotStore store;
  private final String shardId;
  // Local file identity (name, size, entries) to its copy on the volume.
  private final Map<String, String> uploaded = new ConcurrentHashMap<>();
  // Volume paths of files this Db uses in place, by file number; grows when the Db expands.
  private final Map<Long, String> external = new ConcurrentHashMap<>();
  private final AtomicLong bytesUploaded = new AtomicLong();
  private final AtomicLong filesUploaded = new AtomicLong();
  private final AtomicLong bytesLinked = new AtomicLong();
  private final AtomicLong filesLinked = new AtomicLong();

  VolumeFiles(Db db, SnapshotStore store, String shardId, Map<Long, String> inPlace) {
    this.db = db;
    this.store = store;
    this.shardId = shardId;
    external.putAll(inPlace);
  }

  /**
   * Takes over the uploads of {@code latest} (the shard's newest snapshot) for the files the Db has
   * now. That snapshot may come from a later incarnation than the one this Db resumed from (a
   * failed attempt that went on writing): its newer files carry the numbers this Db gives its next
   * files, and rows of the same shape give them the same sizes and entry counts, so they would pass
   * for this Db's own files.
   */
  void inherit(ShardSnapshot latest) {
    Set<String> present = presentIdentities();
    for (SnapshotFile f : latest.files()) {
      if (present.contains(identity(f))) {
        uploaded.put(identity(f), f.volumePath());
      }
    }
  }

  long bytesUploaded() {
    return bytesUploaded.get();
  }

  long filesUploaded() {
    return filesUploaded.get();
  }

  long bytesLinked() {
    return bytesLinked.get();
  }

  long filesLinked() {
    return filesLinked.get();
  }

  /** The volume path of a live file: in place, already uploaded, or uploaded now. */
  String place(long number, String name, long size, long entries) {
    VersionSet vs = db.versionSet();
    if (vs.isExternal(number)) {
      String p = externalPath(number);
      if (p == null) {
        throw new CobbleException(
            "file " + name + " of " + db.directory() + " is external but not in its EXTERNAL list");
      }
      return p;
    }
    String key = identity(name, size, entries);
    String known = uploaded.get(key);
    if (known != null) {
      return known;
    }
    boolean table = name.endsWith(".sst");
    DataFile source = table ? vs.tableFile(number) : vs.vlogFile(number);
    String target = SnapshotStore.newDataPath(shardId, name);
    try {
      long n;
      if (table && link(source, target)) {
        n = size;
        bytesLinked.addAndGet(n);
        filesLinked.incrementAndGet();
      } else {
        try (StorageOutput out = store.storage().create(target)) {
          n = source.copyTo(out, size);
        }
      }
      bytesUploaded.addAndGet(n);
      filesUploaded.incrementAndGet();
    } catch (IOException e) {
      throw new CobbleException(
          "cannot upload " + source + " to " + target + " in " + store.storage().uri(), e);
    }
    uploaded.put(key, target);
    return target;
  }

  /**
   * Hard-links a local table to {@code target} where the volume is on the same file system, as
   * durable as a copy (the storage syncs the file and the new name). A table is never written again
   * once a version names it (a name written again gets a new file, {@link io.cobble.util.NewFile}),
   * and deleting either name (compaction here, retention there) leaves the other's bytes. Value
   * logs are always copied.
   */
  private boolean link(DataFile source, String target) throws IOException {
    return source.isLocal() && store.storage().link(source.localPath(), target);
  }

  /** Forgets uploads that were deleted from the volume. */
  void forget(List<String> deleted) {
    uploaded.values().removeAll(deleted);
  }

  /** Volume paths the version already refers to (in place or uploaded before). */
  Set<String> knownPaths(Version v) {
    Set<String> out = new HashSet<>();
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        addKnown(out, f.number(), tableName(f.number()), f.size(), f.properties().entries());
      }
    }
    for (ValueLogFile f : v.vlogFiles().values()) {
      addKnown(out, f.number(), vlogName(f.number()), f.size(), f.entries());
    }
    return out;
  }

  private void addKnown(Set<String> out, long number, String name, long size, long entries) {
    String p = db.versionSet().isExternal(number) ? externalPath(number) : null;
    if (p == null) {
      p = uploaded.get(identity(name, size, entries));
    }
    if (p != null) {
      out.add(p);
    }
  }

  static String tableName(long number) {
    return String.format("%06d.sst", number);
  }

  static String vlogName(long number) {
    return String.format("%06d.vlog", number);
  }

  /** The volume path of a file used in place; rereads the list when the Db adopted files since. */
  private String externalPath(long number) {
    String p = external.get(number);
    if (p == null) {
      ExternalFiles.read(db.directory()).ifPresent(x -> external.putAll(x.files()));
      p = external.get(number);
    }
    return p;
  }

  private static String identity(String name, long size, long entries) {
    // A Db directory recreated from scratch reuses file numbers; size and entry count tell files
    // of two incarnations apart so an old upload is never mistaken for a new file.
    return name + "/" + size + "/" + entries;
  }

  private static String identity(SnapshotFile f) {
    return identity(
        f.localName(), f.size(), f.isVlog() ? f.vlogEntries() : f.properties().entries());
  }

  /** Identities of the files of the Db's current version. */
  private Set<String> presentIdentities() {
    Version v = db.versionSet().acquire();
    try {
      Set<String> out = new HashSet<>();
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          out.add(identity(tableName(f.number()), f.size(), f.properties().entries()));
        }
      }
      for (ValueLogFile f : v.vlogFiles().values()) {
        out.add(identity(vlogName(f.number()), f.size(), f.entries()));
      }
      return out;
    } finally {
      v.unref();
    }
  }
}
