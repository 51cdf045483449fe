package io.cobble.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where an immutable data file (table or value log) lies: a local path, read with positional reads
 * on a {@link java.nio.channels.FileChannel}, or a path on a {@link Storage}, read in place with
 * ranged reads. Files on shared storage are used where they lie rather than copied.
 */
public final class DataFile {
  private final Path local;
  private final Storage storage;
  private final String path;

  private DataFile(Path local, Storage storage, String path) {
    this.local = local;
    this.storage = storage;
    this.path = path;
  }

  public static DataFile local(Path file) {
    return new DataFile(Objects.requireNonNull(file, "file"), null, null);
  }

  /** A file at {@code path} (relative to the storage's base URI) on {@code storage}. */
  public static DataFile on(Storage storage, String path) {
    StoragePath.check(path);
    return new DataFile(null, Objects.requireNonNull(storage, "storage"), path);
  }

  public boolean isLocal() {
    return local != null;
  }

  /** The local path; null for a file on remote storage. */
  public Path localPath() {
    return local;
  }

  /**
   * Opens a remote file for ranged reads; {@code length} comes from metadata, so opening costs no
   * request.
   */
  public StorageInput openRemote(long length) throws IOException {
    if (storage == null) {
      throw new IllegalStateException(local + " is a local file");
    }
    return storage.open(path, length);
  }

  @Override
  public String toString() {
    return local != null ? local.toString() : storage.uri() + "/" + path;
  }
}
