package io.cobble.storage;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * Files under one base URI, addressed by relative {@code /}-separated paths (see {@link
 * StoragePath}). This is everything the engine asks of a file system or object store: sequential
 * writes, whole and positional reads, listing, deletion and atomic publication. A missing file is
 * reported as {@link java.nio.file.NoSuchFileException}. Implementations are thread-safe.
 */
public interface Storage extends Closeable {

  /** The base URI; paths resolve under it. */
  URI uri();

  /**
   * Creates (or truncates) a file for sequential writing. What a successful {@link
   * StorageOutput#close()} returns from is durable and visible to other processes.
   */
  StorageOutput create(String path) throws IOException;

  /**
   * Gives the local file {@code source}, whose bytes nobody writes again, the name {@code path}
   * here without copying them: a hard link where this storage is a file system on the same device.
   * On true the file at {@code path} is as durable as a closed {@link #create} output; a file
   * already there is replaced. On false nothing was created (another device, no hard links, not a
   * local file system) and the caller copies instead.
   */
  default boolean link(Path source, String path) throws IOException {
    return false;
  }

  /** Opens a file for positional reads (SST blocks); the length is fixed at open. */
  StorageInput open(String path) throws IOException;

  /**
   * Opens a file whose length the caller already knows (from a manifest), for positional reads.
   * Object stores skip the length request; a missing file then fails on the first read.
   */
  default StorageInput open(String path, long length) throws IOException {
    return open(path);
  }

  /** Reads a whole file. */
  byte[] readAll(String path) throws IOException;

  long length(String path) throws IOException;

  boolean exists(String path) throws IOException;

  /**
   * Paths of all files whose path starts with {@code prefix}, in any depth, sorted. A prefix ending
   * in {@code /} lists a directory; the empty prefix lists everything. Temporary files of
   * unfinished publications are not listed.
   */
  List<String> list(String prefix) throws IOException;

  /** Deletes a file; deleting a missing file is not an error. */
  void delete(String path) throws IOException;

  /** Deletes several files, in batches where the storage supports it. */
  default void deleteAll(Collection<String> paths) throws IOException {
    for (String path : paths) {
      delete(path);
    }
  }

  /**
   * Whether {@link #rename} atomically replaces the target (file systems). Object stores copy and
   * delete, so readers may briefly see both names; they publish by writing a new name instead.
   */
  boolean atomicRename();

  /** Moves {@code source} to {@code target}, replacing it. See {@link #atomicRename()}. */
  void rename(String source, String target) throws IOException;

  /**
   * Writes {@code bytes} so that readers see either the previous content of {@code path} or all of
   * {@code bytes}, never a prefix: temporary file and rename on file systems, a single whole-object
   * upload on object stores. Durable on return.
   */
  void publishAtomically(String path, byte[] bytes) throws IOException;

  /**
   * Writes {@code bytes} at {@code path} only if no file is there, atomically and durably: readers
   * see no file or all of {@code bytes}, and of two concurrent calls for one path exactly one
   * returns {@code true}. This is the compare-and-swap that optimistic concurrency (a catalog's
   * numbered metadata versions) builds on. A file already holding exactly {@code bytes} counts as
   * this call's own write: an object store's client may retry a request whose first attempt landed,
   * and the retry must not report a conflict for it.
   *
   * @return false if a file with other content already exists at {@code path}
   * @throws UnsupportedOperationException if the storage cannot create files exclusively
   */
  default boolean createExclusively(String path, byte[] bytes) throws IOException {
    throw new UnsupportedOperationException(
        "Storage at " + uri() + " cannot create files exclusively");
  }
}
