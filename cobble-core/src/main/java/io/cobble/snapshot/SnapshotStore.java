package io.cobble.snapshot;

import io.cobble.CobbleException;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The layout of a snapshot volume and the operations on it. Paths, relative to the volume root:
 *
 * <ul>
 *   <li>{@code data/<shard>/<number>-<uuid>.sst|.vlog}: uploaded data files; the random suffix
 *       makes every upload a new name, so no published file is ever overwritten;
 *   <li>{@code shards/<shard>/snapshot-<id>}: shard snapshot manifests;
 *   <li>{@code leases/<owner>/<uuid>}: export leases keeping files alive for a shard that uses them
 *       before its own snapshot references them;
 *   <li>{@code pins/<shard>/pin-<id>}: pins keeping a shard snapshot out of retention;
 *   <li>{@code global/global-<n>} and {@code global/CURRENT}: global snapshots;
 *   <li>{@code global-pins/<owner>}: leases of readers keeping global snapshots out of retention.
 * </ul>
 *
 * <p>Files are garbage-collected by marking: a data file is deleted only when no shard manifest on
 * the volume and no lease refers to it.
 */
public final class SnapshotStore {
  /** Reads of CURRENT and the global snapshot it names while commits keep moving it on. */
  private static final int CURRENT_ATTEMPTS = 10;

  private static final Pattern SHARD_ID = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
  private static final String SNAPSHOT_PREFIX = "snapshot-";
  private static final Pattern SNAPSHOT_NAME = Pattern.compile("snapshot-\\d{19}");

  private final Storage storage;

  public SnapshotStore(Storage storage) {
    this.storage = storage;
  }

  public Storage storage() {
    return storage;
  }

  public static String checkShardId(String shardId) {
    if (shardId == null || !SHARD_ID.matcher(shardId).matches()) {
      throw new IllegalArgumentException(
          "invalid shard id '"
              + shardId
              + "': use 1 to 128 characters of letters, digits, '_', '-' and '.'");
    }
    return shardId;
  }

  static String manifestPath(String shardId, long id) {
    return String.format("shards/%s/%s%019d", shardId, SNAPSHOT_PREFIX, id);
  }

  static String newDataPath(String shardId, String localName) {
    int dot = localName.lastIndexOf('.');
    return "data/"
        + shardId
        + "/"
        + localName.substring(0, dot)
        + "-"
        + UUID.randomUUID()
        + localName.substring(dot);
  }

  /** Published snapshot ids of a shard (intact or not), ascending. */
  public List<Long> snapshotIds(String shardId) {
    String prefix = "shards/" + checkShardId(shardId) + "/";
    TreeSet<Long> ids = new TreeSet<>();
    for (String p : list(prefix)) {
      String name = p.substring(prefix.length());
      if (SNAPSHOT_NAME.matcher(name).matches()) {
        ids.add(Long.parseLong(name.substring(SNAPSHOT_PREFIX.length())));
      }
    }
    return new ArrayList<>(ids);
  }

  /** Shards that have published snapshots on this volume. */
  public List<String> shardIds() {
    TreeSet<String> out = new TreeSet<>();
    for (String p : list("shards/")) {
      String[] parts = p.split("/");
      if (parts.length == 3 && SNAPSHOT_NAME.matcher(parts[2]).matches()) {
        out.add(parts[1]);
      }
    }
    return new ArrayList<>(out);
  }

  /** The snapshot, or empty when it is missing or fails its checks. */
  public Optional<ShardSnapshot> read(String shardId, long id) {
    Optional<byte[]> payload;
    try {
      payload = MetadataFile.read(storage, manifestPath(checkShardId(shardId), id));
    } catch (IOException e) {
      throw new CobbleException(
          "cannot read snapshot " + id + " of shard " + shardId + " in " + storage.uri(), e);
    }
    if (payload.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(ShardSnapshot.decode(payload.get()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The snapshot with a clear error naming what is wrong when it cannot be used. */
  public ShardSnapshot require(String shardId, long id) {
    Optional<ShardSnapshot> s = read(shardId, id);
    if (s.isPresent()) {
      return s.get();
    }
    List<Long> ids = snapshotIds(shardId);
    if (ids.contains(id)) {
      throw new CobbleException(
          "snapshot "
              + id
              + " of shard "
              + shardId
              + " in "
              + storage.uri()
              + " is corrupt (its manifest fails its checksum); restore an older snapshot: "
              + ids);
    }
    throw new CobbleException(
        "snapshot "
            + id
            + " of shard "
            + shardId
            + " does not exist in "
            + storage.uri()
            + "; published snapshots are "
            + ids);
  }

  /** The newest intact snapshot of a shard; damaged newer manifests are skipped as absent. */
  public Optional<ShardSnapshot> latest(String shardId) {
    List<Long> ids = snapshotIds(shardId);
    for (int i = ids.size() - 1; i >= 0; i--) {
      Optional<ShardSnapshot> s = read(shardId, ids.get(i));
      if (s.isPresent()) {
        return s;
      }
    }
    return Optional.empty();
  }

  public ShardSnapshot requireLatest(String shardId) {
    return latest(shardId)
        .orElseThrow(
            () ->
                new CobbleException(
                    "no intact snapshot of shard "
                        + shardId
                        + " in "
                        + storage.uri()
                        + " (published ids: "
                        + snapshotIds(shardId)
                        + "); check the shard id and the snapshot volume"));
  }

  /**
   * Publishes a shard snapshot manifest whose files are already on the volume; {@link
   * SnapshotManager} does this for its shard, and a caller that places files itself (the Flink
   * state backend stages restored checkpoint files) does it to open a shard from them.
   */
  public void publish(ShardSnapshot s) {
    try {
      MetadataFile.publish(storage, manifestPath(s.shardId(), s.id()), s.encode());
    } catch (IOException e) {
      throw new CobbleException(
          "cannot publish snapshot " + s.id() + " of shard " + s.shardId(), e);
    }
  }

  /** Deletes a metadata file together with its generations (object stores). */
  void deleteMetadata(String path) {
    try {
      for (String p : storage.list(path)) {
        if (p.equals(path) || p.startsWith(path + MetadataFile.GENERATION_INFIX)) {
          storage.delete(p);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot delete " + path + " in " + storage.uri(), e);
    }
  }

  void deleteSnapshot(String shardId, long id) {
    deleteMetadata(manifestPath(shardId, id));
  }

  // ---------------------------------------------------------------- pins

  private static final String PIN_PREFIX = "pin-";
  private static final Pattern PIN_NAME = Pattern.compile("pin-\\d{19}");

  private static String pinPath(String shardId, long id) {
    return String.format("pins/%s/%s%019d", checkShardId(shardId), PIN_PREFIX, id);
  }

  /** Records that snapshot {@code id} of {@code shardId} stays until unpinned. */
  void pin(String shardId, long id) {
    ByteWriter w = new ByteWriter(16);
    w.writeVarLong(id);
    try {
      MetadataFile.publish(storage, pinPath(shardId, id), w.toByteArray());
    } catch (IOException e) {
      throw new CobbleException("cannot pin snapshot " + id + " of shard " + shardId, e);
    }
  }

  void unpin(String shardId, long id) {
    deleteMetadata(pinPath(shardId, id));
  }

  /**
   * Pinned snapshot ids of a shard. A pin is its name: a damaged pin file still pins, since
   * dropping it could expire a snapshot someone relies on.
   */
  public Set<Long> pinnedIds(String shardId) {
    String prefix = "pins/" + checkShardId(shardId) + "/";
    Set<Long> ids = new TreeSet<>();
    for (String p : list(prefix)) {
      String name = p.substring(prefix.length());
      if (PIN_NAME.matcher(name).matches()) {
        ids.add(Long.parseLong(name.substring(PIN_PREFIX.length())));
      }
    }
    return ids;
  }

  // ---------------------------------------------------------------- global snapshots

  static final String CURRENT = "global/CURRENT";
  private static final Pattern GLOBAL_NAME = Pattern.compile("global/global-\\d{19}");

  static String globalPath(long id) {
    return String.format("global/global-%019d", id);
  }

  /** Published global snapshot numbers, ascending. */
  public List<Long> globalIds() {
    TreeSet<Long> ids = new TreeSet<>();
    for (String p : list("global/")) {
      if (GLOBAL_NAME.matcher(p).matches()) {
        ids.add(Long.parseLong(p.substring("global/global-".length())));
      }
    }
    return new ArrayList<>(ids);
  }

  public Optional<GlobalSnapshot> readGlobal(long id) {
    try {
      Optional<byte[]> payload = MetadataFile.read(storage, globalPath(id));
      return payload.isEmpty()
          ? Optional.empty()
          : Optional.of(GlobalSnapshot.decode(payload.get()));
    } catch (IOException e) {
      throw new CobbleException("cannot read global snapshot " + id + " in " + storage.uri(), e);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The number {@code CURRENT} points to, if it is intact. */
  public Optional<Long> currentGlobalId() {
    try {
      return MetadataFile.read(storage, CURRENT).map(b -> new ByteReader(b).readVarLong());
    } catch (IOException e) {
      throw new CobbleException("cannot read " + CURRENT + " in " + storage.uri(), e);
    }
  }

  /**
   * The global snapshot {@code CURRENT} names, empty before the first commit. A committer's
   * retention removes a global snapshot once {@code CURRENT} has moved past it (with a retention of
   * one, right after the next commit), so one that vanished under a {@code CURRENT} that moved on
   * is read again; one missing while {@code CURRENT} still names it is an error.
   */
  public Optional<GlobalSnapshot> currentGlobal() {
    Optional<Long> id = currentGlobalId();
    for (int attempt = 1; id.isPresent(); attempt++) {
      Optional<GlobalSnapshot> global = readGlobal(id.get());
      if (global.isPresent()) {
        return global;
      }
      Optional<Long> now = currentGlobalId();
      if (now.equals(id) || attempt == CURRENT_ATTEMPTS) {
        return Optional.of(requireGlobal(id.get()));
      }
      id = now;
    }
    return Optional.empty();
  }

  /** The number {@code CURRENT} points to, with a clear error when there is none intact. */
  public long requireCurrentGlobalId() {
    return currentGlobalId()
        .orElseThrow(
            () ->
                new CobbleException(
                    "no intact global/CURRENT in "
                        + storage.uri()
                        + "; commit a global snapshot first"));
  }

  /** The global snapshot {@code id}, with a clear error naming the published ones when absent. */
  public GlobalSnapshot requireGlobal(long id) {
    return readGlobal(id)
        .orElseThrow(
            () ->
                new CobbleException(
                    "global snapshot "
                        + id
                        + " in "
                        + storage.uri()
                        + " is missing or corrupt; published: "
                        + globalIds()));
  }

  /** Snapshot ids of {@code shardId} that some intact global snapshot refers to. */
  Set<Long> globallyReferenced(String shardId) {
    Set<Long> out = new HashSet<>();
    for (long g : globalIds()) {
      readGlobal(g)
          .ifPresent(
              gs -> {
                for (GlobalSnapshot.Part p : gs.parts()) {
                  if (p.shardId().equals(shardId)) {
                    out.add(p.snapshotId());
                  }
                }
              });
    }
    return out;
  }

  // ---------------------------------------------------------------- global pins

  private static final String GLOBAL_PINS = "global-pins/";

  /** Publishes (or replaces) the pin of {@code pin.owner()}. */
  public void pinGlobals(GlobalPin pin) {
    try {
      MetadataFile.publish(storage, GLOBAL_PINS + pin.owner(), pin.encode());
    } catch (IOException e) {
      throw new CobbleException("cannot write the " + pin + " in " + storage.uri(), e);
    }
  }

  /** Removes the pin of {@code owner}, if any. */
  public void releaseGlobalPin(String owner) {
    deleteMetadata(GLOBAL_PINS + checkShardId(owner));
  }

  /**
   * The intact global pins. A damaged pin names nothing it could keep, so it is skipped; it stays
   * on the volume until its owner replaces it.
   */
  public List<GlobalPin> globalPins() {
    List<GlobalPin> pins = new ArrayList<>();
    for (String p : list(GLOBAL_PINS)) {
      String owner = p.substring(GLOBAL_PINS.length());
      if (owner.contains(MetadataFile.GENERATION_INFIX) || !SHARD_ID.matcher(owner).matches()) {
        continue;
      }
      try {
        Optional<byte[]> payload = MetadataFile.read(storage, p);
        if (payload.isPresent()) {
          pins.add(GlobalPin.decode(owner, payload.get()));
        }
      } catch (IOException e) {
        throw new CobbleException("cannot read global pin " + p + " in " + storage.uri(), e);
      } catch (RuntimeException e) {
        // Damaged: skipped, see above.
      }
    }
    return pins;
  }

  // ---------------------------------------------------------------- leases

  /** Records that {@code owner} uses {@code paths} before any of its snapshots refers to them. */
  public ExportLease createLease(String owner, Collection<String> paths) {
    String path = "leases/" + checkShardId(owner) + "/" + UUID.randomUUID();
    ByteWriter w = new ByteWriter(256);
    w.writeVarInt(paths.size());
    for (String p : paths) {
      w.writeString(p);
    }
    try {
      MetadataFile.publish(storage, path, w.toByteArray());
    } catch (IOException e) {
      throw new CobbleException("cannot write export lease " + path, e);
    }
    return new ExportLease(this, path, new ArrayList<>(paths));
  }

  /** Lease files of {@code owner}, or of everyone when null. */
  public List<String> leasePaths(String owner) {
    List<String> out = new ArrayList<>();
    String prefix = owner == null ? "leases/" : "leases/" + owner + "/";
    for (String p : list(prefix)) {
      if (!p.contains(MetadataFile.GENERATION_INFIX)) {
        out.add(p);
      }
    }
    return out;
  }

  private List<String> leasedFiles(String leasePath) {
    try {
      Optional<byte[]> payload = MetadataFile.read(storage, leasePath);
      List<String> out = new ArrayList<>();
      if (payload.isPresent()) {
        ByteReader r = new ByteReader(payload.get());
        int n = r.readVarInt();
        for (int i = 0; i < n; i++) {
          out.add(r.readString());
        }
      }
      return out;
    } catch (IOException e) {
      throw new CobbleException("cannot read export lease " + leasePath, e);
    }
  }

  // ---------------------------------------------------------------- garbage collection

  /** Passes over one shard's manifests while other processes keep deleting them. */
  private static final int MARK_ATTEMPTS = 5;

  /**
   * Every data file some shard manifest or lease refers to. A damaged manifest makes collection
   * fail rather than guess, since its files might still be needed.
   */
  Set<String> referencedFiles() {
    Set<String> live = new HashSet<>();
    for (String shard : shardIds()) {
      markShard(shard, live);
    }
    for (String lease : leasePaths(null)) {
      live.addAll(leasedFiles(lease));
    }
    return live;
  }

  /**
   * Adds the files of every manifest of {@code shard}. Other processes (the shard's writer, a
   * global retention pass) delete manifests while this runs; one listed and then deleted before it
   * was read is not damage. Its shard published a newer manifest before deleting it (retention only
   * removes older snapshots), so the shard is listed again to mark that one.
   */
  private void markShard(String shard, Set<String> live) {
    for (int attempt = 1; ; attempt++) {
      boolean vanished = false;
      for (long id : snapshotIds(shard)) {
        Optional<ShardSnapshot> s = read(shard, id);
        if (s.isPresent()) {
          for (SnapshotFile f : s.get().files()) {
            live.add(f.volumePath());
          }
        } else if (manifestExists(shard, id)) {
          throw new CobbleException(
              "cannot collect garbage in "
                  + storage.uri()
                  + ": snapshot "
                  + id
                  + " of shard "
                  + shard
                  + " is damaged; delete or restore it first");
        } else {
          vanished = true;
        }
      }
      if (!vanished) {
        return;
      }
      if (attempt == MARK_ATTEMPTS) {
        throw new CobbleException(
            "cannot collect garbage in "
                + storage.uri()
                + ": snapshots of shard "
                + shard
                + " were deleted while "
                + MARK_ATTEMPTS
                + " passes read them; collection is retried with the next snapshot");
      }
    }
  }

  boolean manifestExists(String shardId, long id) {
    try {
      return storage.exists(manifestPath(shardId, id));
    } catch (IOException e) {
      throw new CobbleException(
          "cannot check snapshot " + id + " of shard " + shardId + " in " + storage.uri(), e);
    }
  }

  /** Deletes those {@code candidates} that nothing refers to; returns the deleted paths. */
  List<String> collect(Collection<String> candidates, Set<String> alsoLive) {
    List<String> deleted = new ArrayList<>();
    if (candidates.isEmpty()) {
      return deleted;
    }
    Set<String> live = referencedFiles();
    for (String c : candidates) {
      if (!live.contains(c) && !alsoLive.contains(c)) {
        try {
          storage.delete(c);
          deleted.add(c);
        } catch (IOException e) {
          throw new CobbleException("cannot delete " + c + " in " + storage.uri(), e);
        }
      }
    }
    return deleted;
  }

  /** Data files uploaded by {@code shardId}. */
  public List<String> dataFiles(String shardId) {
    return list("data/" + checkShardId(shardId) + "/");
  }

  private List<String> list(String prefix) {
    try {
      return storage.list(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + prefix + " in " + storage.uri(), e);
    }
  }
}
