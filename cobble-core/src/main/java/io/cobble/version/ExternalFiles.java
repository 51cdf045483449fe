package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.storage.DataFile;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageProviders;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeSet;
import io.cobble.storage.file.FileStorage;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Data files a Db uses where they lie on a snapshot volume instead of in its own directory: the
 * volume's base URI (never its credentials) and file number to the file's path relative to it.
 * Written (metadata envelope, atomic) before the manifest that refers to them, so after a crash it
 * may list more files than the manifest, never fewer. The volume-relative name lets a new snapshot
 * reference the file instead of uploading it.
 */
public final class ExternalFiles {
  public static final String FILE_NAME = "EXTERNAL";

  private final URI root;
  private final Map<Long, String> files;

  public ExternalFiles(URI root, Map<Long, String> files) {
    this.root = root;
    this.files = Collections.unmodifiableMap(new LinkedHashMap<>(files));
  }

  /** The base URI of the volume the files lie on. */
  public URI root() {
    return root;
  }

  /** File number to path relative to {@link #root()}. */
  public Map<Long, String> files() {
    return files;
  }

  /** Whether the files lie on {@code storage}'s volume. */
  public boolean isOn(Storage storage) {
    return sameLocation(root, storage.uri());
  }

  /** The volume of {@code volumes} the files lie on, when they are not local. */
  public Optional<Volume> remoteVolumeIn(VolumeSet volumes) {
    if ("file".equalsIgnoreCase(root.getScheme())) {
      return Optional.empty();
    }
    return volumes.volumes().stream().filter(v -> sameLocation(root, v.uri())).findFirst();
  }

  /**
   * Where each file lies. Files on a local volume are read through their paths; files on any other
   * volume through {@code volume}, the open storage of that volume (null when the caller has none).
   *
   * @throws IllegalArgumentException when the files are remote and {@code volume} is not theirs
   */
  public Map<Long, DataFile> locate(Storage volume, Path dbDir) {
    Map<Long, DataFile> out = new LinkedHashMap<>();
    boolean local = "file".equalsIgnoreCase(root.getScheme());
    if (!local && (volume == null || !isOn(volume))) {
      throw new IllegalArgumentException(
          "the Db in "
              + dbDir
              + " reads its files in place on "
              + root
              + (volume == null ? "" : ", not on " + volume.uri())
              + "; open it with that volume's storage (Db.open(dir, config, volume) or"
              + " SnapshotRestore.resume)");
    }
    for (Map.Entry<Long, String> e : files.entrySet()) {
      out.put(
          e.getKey(),
          local
              ? DataFile.local(Paths.get(root).resolve(e.getValue()))
              : DataFile.on(volume, e.getValue()));
    }
    return out;
  }

  private static boolean sameLocation(URI a, URI b) {
    return trimSlash(a.toString()).equals(trimSlash(b.toString()));
  }

  private static String trimSlash(String s) {
    return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  public void write(Path dbDir) {
    write(dbDir, true);
  }

  /** {@link #write}, fsynced only if {@code sync} (false: see {@code Config.scratchRestore}). */
  public void write(Path dbDir, boolean sync) {
    ByteWriter w = new ByteWriter(256);
    w.writeString(root.toString());
    w.writeVarInt(files.size());
    for (Map.Entry<Long, String> e : files.entrySet()) {
      w.writeVarLong(e.getKey());
      w.writeString(e.getValue());
    }
    if (sync) {
      MetadataFile.publishIn(dbDir, FILE_NAME, w.toByteArray());
      return;
    }
    try (FileStorage unsynced = FileStorage.open(dbDir.toAbsolutePath(), false)) {
      MetadataFile.publish(unsynced, FILE_NAME, w.toByteArray());
    } catch (IOException e) {
      throw new CobbleException("cannot write " + dbDir.resolve(FILE_NAME), e);
    }
  }

  /** The external files of the Db in {@code dbDir}; empty when it has none. */
  public static Optional<ExternalFiles> read(Path dbDir) {
    Optional<byte[]> payload = MetadataFile.readIn(dbDir, FILE_NAME);
    if (payload.isEmpty()) {
      return Optional.empty();
    }
    ByteReader r = new ByteReader(payload.get());
    // Older lists hold a local path; StorageProviders.toUri reads both that and a URI.
    URI root = StorageProviders.toUri(r.readString());
    int n = r.readVarInt();
    Map<Long, String> files = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      files.put(r.readVarLong(), r.readString());
    }
    return Optional.of(new ExternalFiles(root, files));
  }
}
