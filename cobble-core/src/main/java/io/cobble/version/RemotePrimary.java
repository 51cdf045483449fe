package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.CachedStorage;
import io.cobble.storage.DataFile;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOutput;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * A Db's working state on a remote primary volume (object storage). Layout under the volume:
 *
 * <ul>
 *   <li>{@code data/e<epoch>-<number>.sst|.vlog}: data files, uploaded before any manifest names
 *       them; the epoch is that of the writer that produced the file, so writers never share an
 *       object name.
 *   <li>{@code manifests/MANIFEST-<seq>-e<epoch>}: write-once manifests (checksummed metadata
 *       envelope around the {@link Manifest} and the epoch of every file it names).
 *   <li>{@code CURRENT}: the published pointer (checksummed) to the newest manifest and its
 *       predecessor, the fallback when the newest one fails its checksum.
 *   <li>{@code LEASE}: the {@link WriterLease}.
 *   <li>{@code RANGES}: the owned bucket ranges once a shrink or expansion changed them ({@link
 *       OwnedRanges}); published after the manifest that holds the files of new buckets.
 *   <li>{@code RESTORING}: present while {@link #install} replaces the state.
 * </ul>
 *
 * <p>Files a restore adopts where they lie ({@link #installAdopted}) are named {@code
 * data/e0-<number>.sst|.vlog}: the primary's storage serves them from their real location, and the
 * Db never deletes or sweeps them.
 *
 * <p>Reads go through a {@link CachedStorage} whose cache keeps the files this writer uploaded
 * (write-through) and chunks of the others.
 */
public final class RemotePrimary {
  public static final String DATA = "data/";
  public static final String MANIFESTS = "manifests/";
  public static final String CURRENT = "CURRENT";
  public static final String RANGES = OwnedRanges.FILE_NAME;
  public static final String RESTORING = "RESTORING";
  private static final String MANIFEST_PREFIX = MANIFESTS + Manifest.PREFIX;
  private static final long ADOPTED_EPOCH = 0;
  private static final String ADOPTED_PREFIX = DATA + "e" + ADOPTED_EPOCH + "-";

  private final CachedStorage storage;
  private WriterLease lease;
  // File number to the epoch in its object name, for every file a kept manifest or a pending
  // version edit names.
  private final Map<Long, Long> epochs = new ConcurrentHashMap<>();
  // Guarded by this.
  private String currentManifest;
  private String previousManifest;

  private RemotePrimary(CachedStorage storage, WriterLease lease) {
    this.storage = storage;
    this.lease = lease;
  }

  /** Takes the writer lease on {@code storage}'s volume. */
  public static RemotePrimary open(CachedStorage storage) {
    try {
      return new RemotePrimary(storage, WriterLease.acquire(storage, 0));
    } catch (IOException e) {
      throw new CobbleException("cannot take the writer lease on " + storage.uri(), e);
    }
  }

  public CachedStorage storage() {
    return storage;
  }

  public long epoch() {
    return lease.epoch();
  }

  /** A manifest read back: its object name, sequence number, content and file epochs. */
  private static final class Loaded {
    final String name;
    final long seq;
    final long writerEpoch;
    final Manifest manifest;
    final Map<Long, Long> epochs;

    Loaded(String name, long seq, long writerEpoch, Manifest manifest, Map<Long, Long> epochs) {
      this.name = name;
      this.seq = seq;
      this.writerEpoch = writerEpoch;
      this.manifest = manifest;
      this.epochs = epochs;
    }
  }

  /**
   * Reads the state {@code CURRENT} points to. A manifest that is missing or fails its checksum
   * counts as absent and the previous one is used; a damaged {@code CURRENT} falls back to the
   * newest readable manifest in {@code manifests/}. Also drops cached data of files that are no
   * longer live (file names are unique only among live files).
   */
  public synchronized Manifest.Recovered recover() {
    try {
      List<String> candidates = new ArrayList<>();
      boolean pointerExists = storage.exists(CURRENT);
      Optional<byte[]> pointer = MetadataFile.read(storage, CURRENT);
      if (pointer.isPresent()) {
        ByteReader r = new ByteReader(pointer.get());
        candidates.add(r.readString());
        String previous = r.readString();
        if (!previous.isEmpty()) {
          candidates.add(previous);
        }
      } else {
        candidates.addAll(listManifests());
      }
      if (candidates.isEmpty() && !pointerExists) {
        storage.cache().retainOnly(Collections.emptySet());
        return new Manifest.Recovered(null, 0, null);
      }
      Loaded current = null;
      Loaded previous = null;
      CorruptionException failure = null;
      for (String name : candidates) {
        try {
          Loaded l = load(name);
          if (current == null) {
            current = l;
          } else {
            previous = l;
            break;
          }
        } catch (CorruptionException e) {
          if (failure == null) {
            failure = e;
          } else {
            failure.addSuppressed(e);
          }
        }
      }
      if (current == null) {
        throw failure != null
            ? failure
            : new CorruptionException(
                storage.uri() + "/" + CURRENT, "no readable manifest on the volume");
      }
      long newest = current.writerEpoch;
      Set<String> live = new HashSet<>();
      for (Loaded l : previous == null ? List.of(current) : List.of(previous, current)) {
        epochs.putAll(l.epochs);
        newest = Math.max(newest, l.writerEpoch);
        for (Map.Entry<Long, Long> e : l.epochs.entrySet()) {
          live.add(path(e.getKey(), e.getValue(), false));
          live.add(path(e.getKey(), e.getValue(), true));
        }
      }
      if (newest >= lease.epoch()) {
        // The lease object was lost or damaged: take a new one above every epoch in use.
        lease = WriterLease.acquire(storage, newest);
      }
      storage.cache().retainOnly(live);
      currentManifest = current.name;
      previousManifest = previous == null ? null : previous.name;
      return new Manifest.Recovered(
          current.manifest, current.seq, previous == null ? null : previous.manifest);
    } catch (IOException e) {
      throw new CobbleException("cannot read the Db state on " + storage.uri(), e);
    }
  }

  /** The owned bucket ranges published on the volume; empty until a shrink or expansion. */
  public Optional<int[]> ranges() {
    try {
      return MetadataFile.read(storage, RANGES).map(OwnedRanges::decode);
    } catch (IOException e) {
      throw new CobbleException("cannot read " + RANGES + " on " + storage.uri(), e);
    }
  }

  /**
   * Publishes the owned bucket ranges if this writer still holds the lease. A shrink needs nothing
   * else; an expansion publishes its manifest first, so a crash in between leaves the adopted rows
   * in buckets the Db does not own: never read, dropped by compaction or a retried expansion.
   */
  public synchronized void publishRanges(int[] pairs) {
    try {
      lease.check();
      storage.publishAtomically(RANGES, MetadataFile.encode(OwnedRanges.encode(pairs)));
    } catch (IOException e) {
      throw new CobbleException("cannot publish " + RANGES + " on " + storage.uri(), e);
    }
  }

  /** Whether {@link #install} was interrupted on {@code primary}. */
  public static boolean restoring(Storage primary) {
    try {
      return primary.exists(RESTORING);
    } catch (IOException e) {
      throw new CobbleException("cannot read the Db state on " + primary.uri(), e);
    }
  }

  /**
   * Replaces whatever state {@code primary} holds by {@code m} owning {@code ranges}: fences the
   * current writer, marks the volume {@code RESTORING}, deletes the old state, copies every file
   * {@code m} names from {@code sources} (by number, on a snapshot volume), publishes {@code m} and
   * the ranges, then removes the mark. A crash part way leaves the mark, which makes every open
   * fail until the install runs again.
   */
  public static void install(
      Storage primary, Manifest m, int[] ranges, LongFunction<DataFile> sources) {
    install(primary, m, ranges, sources, false);
  }

  /**
   * {@link #install} without copying: the files of {@code m} stay where they lie, owned by someone
   * else (a checkpoint the Db resumes from), and the Db reads each under {@link #adoptedPath},
   * which {@code primary} must serve from the file's real location. The Db never deletes them.
   */
  public static void installAdopted(Storage primary, Manifest m, int[] ranges) {
    install(primary, m, ranges, null, true);
  }

  /**
   * The name under which the Db reads adopted file {@code number}: the epoch of no writer (leases
   * start at 1), so it names no object a writer uploads.
   */
  public static String adoptedPath(long number, boolean vlog) {
    return path(number, ADOPTED_EPOCH, vlog);
  }

  private static void install(
      Storage primary, Manifest m, int[] ranges, LongFunction<DataFile> sources, boolean adopt) {
    try {
      WriterLease lease = WriterLease.acquire(primary, 0);
      primary.publishAtomically(RESTORING, MetadataFile.encode(new byte[0]));
      List<String> old = new ArrayList<>(primary.list(DATA));
      old.addAll(primary.list(MANIFESTS));
      old.add(CURRENT);
      old.add(RANGES);
      for (String p : old) {
        if (primary.exists(p) && !isAdopted(p)) {
          primary.delete(p);
        }
      }
      long fileEpoch = adopt ? ADOPTED_EPOCH : lease.epoch();
      Map<Long, Long> epochs = new HashMap<>();
      for (Manifest.FileEntry f : m.files) {
        if (!adopt) {
          copy(sources.apply(f.number), f.size, primary, path(f.number, fileEpoch, false));
        }
        epochs.put(f.number, fileEpoch);
      }
      for (ValueLogFile f : m.vlogs) {
        if (!adopt) {
          copy(sources.apply(f.number()), f.size(), primary, path(f.number(), fileEpoch, true));
        }
        epochs.put(f.number(), fileEpoch);
      }
      String name = String.format("%s%06d-e%d", MANIFEST_PREFIX, 1, lease.epoch());
      primary.publishAtomically(name, MetadataFile.encode(envelope(lease.epoch(), m, epochs)));
      ByteWriter pointer = new ByteWriter(128);
      pointer.writeString(name);
      pointer.writeString("");
      lease.check();
      primary.publishAtomically(CURRENT, MetadataFile.encode(pointer.toByteArray()));
      primary.publishAtomically(RANGES, MetadataFile.encode(OwnedRanges.encode(ranges)));
      primary.delete(RESTORING);
    } catch (IOException e) {
      throw new CobbleException("cannot restore the Db state onto " + primary.uri(), e);
    }
  }

  private static boolean isAdopted(String path) {
    return path.startsWith(ADOPTED_PREFIX);
  }

  private static void copy(DataFile source, long size, Storage target, String path)
      throws IOException {
    try (StorageOutput out = target.create(path)) {
      source.copyTo(out, size);
    }
  }

  /** The manifest object's payload: the writer's epoch, the manifest, each file's epoch. */
  private static byte[] envelope(long writerEpoch, Manifest m, Map<Long, Long> fileEpochs) {
    ByteWriter w = new ByteWriter(1024);
    w.writeVarLong(writerEpoch);
    w.writeLengthPrefixed(m.encode());
    Set<Long> numbers = m.fileNumbers();
    w.writeVarInt(numbers.size());
    for (long n : numbers) {
      w.writeVarLong(n);
      w.writeVarLong(fileEpochs.get(n));
    }
    return w.toByteArray();
  }

  /** Manifest names on the volume, newest writer and sequence first. */
  private List<String> listManifests() throws IOException {
    List<String> names = new ArrayList<>();
    for (String p : storage.list(MANIFESTS)) {
      if (p.startsWith(MANIFEST_PREFIX) && parse(p) != null) {
        names.add(p);
      }
    }
    names.sort(
        Comparator.comparing((String p) -> parse(p)[1]).thenComparing(p -> parse(p)[0]).reversed());
    return names;
  }

  /** {seq, epoch} of a manifest name, or null when it is not one. */
  private static long[] parse(String name) {
    String rest = name.substring(MANIFEST_PREFIX.length());
    int e = rest.indexOf("-e");
    if (e < 0) {
      return null;
    }
    try {
      return new long[] {
        Long.parseLong(rest.substring(0, e)), Long.parseLong(rest.substring(e + 2))
      };
    } catch (NumberFormatException ex) {
      return null;
    }
  }

  private Loaded load(String name) throws IOException {
    String where = storage.uri() + "/" + name;
    long[] parsed = name.startsWith(MANIFEST_PREFIX) ? parse(name) : null;
    if (parsed == null) {
      throw new CorruptionException(where, "not a manifest name");
    }
    byte[] bytes;
    try {
      bytes = storage.readAll(name);
    } catch (NoSuchFileException e) {
      throw new CorruptionException(where, "manifest is missing");
    }
    Optional<byte[]> payload = MetadataFile.decode(bytes);
    if (payload.isEmpty()) {
      throw new CorruptionException(where, "manifest fails its checksum");
    }
    try {
      ByteReader r = new ByteReader(payload.get());
      long writerEpoch = r.readVarLong();
      Manifest m = Manifest.decode(where, r.readLengthPrefixed());
      int n = r.readVarInt();
      Map<Long, Long> fileEpochs = new HashMap<>();
      for (int i = 0; i < n; i++) {
        fileEpochs.put(r.readVarLong(), r.readVarLong());
      }
      if (!fileEpochs.keySet().containsAll(m.fileNumbers())) {
        throw new CorruptionException(where, "manifest names files without an object name");
      }
      return new Loaded(name, parsed[0], writerEpoch, m, fileEpochs);
    } catch (IllegalStateException | IndexOutOfBoundsException e) {
      throw new CorruptionException(where, "cannot decode manifest: " + e.getMessage(), e);
    }
  }

  /**
   * Publishes manifest {@code seq}: writes the manifest under a new name, checks the lease and
   * points {@code CURRENT} at it (the previous newest stays as the fallback); the manifest before
   * that is deleted.
   */
  public synchronized void publish(Manifest m, long seq) {
    String name = String.format("%s%06d-e%d", MANIFEST_PREFIX, seq, lease.epoch());
    Map<Long, Long> fileEpochs = new HashMap<>();
    for (long n : m.fileNumbers()) {
      fileEpochs.put(n, epochOf(n));
    }
    byte[] payload = envelope(lease.epoch(), m, fileEpochs);
    ByteWriter pointer = new ByteWriter(128);
    pointer.writeString(name);
    pointer.writeString(currentManifest == null ? "" : currentManifest);
    try {
      // Only the pointer needs the lease checked right before it: a fenced writer's manifest
      // object is named by no pointer, and recovery without a pointer prefers the higher epoch of
      // the writer that fenced it (which publishes as it opens).
      storage.publishAtomically(name, MetadataFile.encode(payload));
      lease.check();
      storage.publishAtomically(CURRENT, MetadataFile.encode(pointer.toByteArray()));
    } catch (IOException e) {
      throw new CobbleException("cannot publish manifest " + name + " on " + storage.uri(), e);
    }
    String stale = previousManifest;
    previousManifest = currentManifest;
    currentManifest = name;
    if (stale != null) {
      try {
        storage.delete(stale);
      } catch (IOException e) {
        // Swept at the next open.
      }
    }
  }

  /** Whether file {@code number} is a checkpoint's file read in place ({@link #adoptedPath}). */
  public boolean isAdopted(long number) {
    Long e = epochs.get(number);
    return e != null && e == ADOPTED_EPOCH;
  }

  private long epochOf(long number) {
    Long e = epochs.get(number);
    if (e == null) {
      throw new IllegalStateException("file " + number + " was never uploaded to " + storage.uri());
    }
    return e;
  }

  private static String path(long number, long epoch, boolean vlog) {
    return DATA + "e" + epoch + "-" + String.format("%06d", number) + (vlog ? ".vlog" : ".sst");
  }

  /** The object name of a live file. */
  public String path(long number, boolean vlog) {
    return path(number, epochOf(number), vlog);
  }

  /** A live file, read in place through the cache. */
  public DataFile dataFile(long number, boolean vlog) {
    return DataFile.on(storage, path(number, vlog));
  }

  /**
   * Uploads a finished local file (durable on return) and moves it into the cache, so this writer
   * reads its own files locally.
   */
  public void upload(long number, boolean vlog, Path local) {
    epochs.put(number, lease.epoch());
    String path = path(number, vlog);
    try {
      try (InputStream in = Files.newInputStream(local);
          StorageOutput out = storage.create(path)) {
        in.transferTo(out);
      }
      storage.cache().adopt(path, local);
    } catch (IOException e) {
      throw new CobbleException(
          "cannot upload " + local.getFileName() + " to " + storage.uri() + "/" + path, e);
    }
  }

  /**
   * Forgets uploads a failed flush or compaction will never install: their cached copies go now,
   * the remote objects at the next writer's open (the volume may be what failed).
   */
  public void discard(Map<Long, Boolean> files) {
    for (Map.Entry<Long, Boolean> f : files.entrySet()) {
      Long epoch = epochs.remove(f.getKey());
      if (epoch != null) {
        storage.cache().dropAll(path(f.getKey(), epoch, f.getValue()));
      }
    }
  }

  /**
   * Deletes files (number to whether it is a value log) no kept manifest names any more, if this
   * writer still holds the lease: one lease check and batched deletes per call.
   */
  public void delete(Map<Long, Boolean> files) throws IOException {
    List<String> paths = new ArrayList<>();
    for (Map.Entry<Long, Boolean> f : files.entrySet()) {
      Long epoch = epochs.get(f.getKey());
      if (epoch != null && epoch != ADOPTED_EPOCH) {
        paths.add(path(f.getKey(), epoch, f.getValue()));
      }
    }
    if (paths.isEmpty()) {
      epochs.keySet().removeAll(files.keySet());
      return;
    }
    lease.check();
    storage.deleteAll(paths);
    epochs.keySet().removeAll(files.keySet());
  }

  /**
   * Forgets the name of dead file {@code number} that someone else deletes (the embedder owns it,
   * see {@link FileOwnership}), so the names of dead files do not pile up.
   */
  public void forget(long number) {
    epochs.remove(number);
  }

  /**
   * Deletes objects no kept manifest names: uploads of flushes and compactions a crash or failure
   * interrupted before their manifest was published, and older manifests.
   */
  public synchronized void sweep(Set<Long> live) {
    try {
      lease.check();
      Set<String> keep = new HashSet<>();
      for (long n : live) {
        keep.add(path(n, false));
        keep.add(path(n, true));
      }
      List<String> orphans = new ArrayList<>();
      for (String p : storage.list(DATA)) {
        if (!keep.contains(p) && !isAdopted(p)) {
          orphans.add(p);
        }
      }
      for (String p : storage.list(MANIFESTS)) {
        if (!p.equals(currentManifest) && !p.equals(previousManifest)) {
          orphans.add(p);
        }
      }
      if (!orphans.isEmpty()) {
        storage.deleteAll(orphans);
      }
      epochs.keySet().retainAll(live);
    } catch (IOException e) {
      throw new CobbleException("cannot sweep orphaned files on " + storage.uri(), e);
    }
  }
}
