package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Data files a Db uses where they lie on a snapshot volume instead of in its own directory: file
 * number to the file's path relative to the volume root. Written (metadata envelope, atomic) before
 * the manifest that refers to them, so after a crash it may list more files than the manifest,
 * never fewer. The volume-relative name lets a new snapshot reference the file instead of uploading
 * it.
 */
public final class ExternalFiles {
  public static final String FILE_NAME = "EXTERNAL";

  private final Path root;
  private final Map<Long, String> files;

  public ExternalFiles(Path root, Map<Long, String> files) {
    this.root = root;
    this.files = Collections.unmodifiableMap(new LinkedHashMap<>(files));
  }

  public Path root() {
    return root;
  }

  /** File number to path relative to {@link #root()}. */
  public Map<Long, String> files() {
    return files;
  }

  public Map<Long, Path> absolutePaths() {
    Map<Long, Path> out = new LinkedHashMap<>();
    for (Map.Entry<Long, String> e : files.entrySet()) {
      out.put(e.getKey(), root.resolve(e.getValue()));
    }
    return out;
  }

  public void write(Path dbDir) {
    ByteWriter w = new ByteWriter(256);
    w.writeString(root.toString());
    w.writeVarInt(files.size());
    for (Map.Entry<Long, String> e : files.entrySet()) {
      w.writeVarLong(e.getKey());
      w.writeString(e.getValue());
    }
    try (Storage s = StorageProviders.open(dbDir.toUri(), StorageOptions.empty())) {
      MetadataFile.publish(s, FILE_NAME, w.toByteArray());
    } catch (IOException e) {
      throw new CobbleException("cannot write " + dbDir.resolve(FILE_NAME), e);
    }
  }

  /** The external files of the Db in {@code dbDir}; empty when it has none. */
  public static Optional<ExternalFiles> read(Path dbDir) {
    Optional<byte[]> payload;
    try (Storage s = StorageProviders.open(dbDir.toUri(), StorageOptions.empty())) {
      payload = MetadataFile.read(s, FILE_NAME);
    } catch (IOException e) {
      throw new CobbleException("cannot read " + dbDir.resolve(FILE_NAME), e);
    }
    if (payload.isEmpty()) {
      return Optional.empty();
    }
    ByteReader r = new ByteReader(payload.get());
    Path root = Paths.get(r.readString());
    int n = r.readVarInt();
    Map<Long, String> files = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      files.put(r.readVarLong(), r.readString());
    }
    return Optional.of(new ExternalFiles(root, files));
  }
}
