package io.cobble.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
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

  /**
   * Copies the file, {@code size} bytes long (from metadata), to {@code out}; used where a file
   * must move between volumes (snapshot uploads, restores onto a remote primary).
   */
  public long copyTo(OutputStream out, long size) throws IOException {
    if (local != null) {
      try (InputStream in = Files.newInputStream(local)) {
        return in.transferTo(out);
      }
    }
    byte[] buf = new byte[(int) Math.min(Math.max(size, 1), 1 << 20)];
    try (StorageInput in = storage.open(path, size)) {
      for (long at = 0; at < size; ) {
        int n = (int) Math.min(buf.length, size - at);
        in.readFully(at, buf, 0, n);
        out.write(buf, 0, n);
        at += n;
      }
    }
    return size;
  }

  @Override
  public String toString() {
    return local != null ? local.toString() : storage.uri() + "/" + path;
  }
}
