package io.cobble.storage.file;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.StoragePath;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/** {@link Storage} on a local or mounted file system. */
public final class FileStorage implements Storage {

  /**
   * Name prefix of the temporary files {@link #publishAtomically} writes next to their target;
   * listings skip them, so a publication cut short by a crash never shows up as a file.
   */
  static final String TEMP_PREFIX = ".cobble-tmp.";

  private final Path root;
  private final FileSync sync;

  private FileStorage(Path root, FileSync sync) {
    this.root = root;
    this.sync = sync;
  }

  /** Opens (creating if needed) storage rooted at an absolute directory. */
  public static FileStorage open(Path root, boolean fsync) throws IOException {
    FileStorage storage = new FileStorage(root, new FileSync(fsync));
    storage.createDirectories(root);
    if (!Files.isDirectory(root)) {
      throw new NotDirectoryException(root.toString());
    }
    return storage;
  }

  @Override
  public URI uri() {
    return root.toUri();
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    Path file = resolve(path);
    createDirectories(file.getParent());
    return new FileOutput(openNew(file), file.getParent(), sync);
  }

  /**
   * Links {@code source} to {@code path} when both are on this file system, then syncs the file and
   * its new directory entry as {@link #create}'s close does: the writer of {@code source} may not
   * have synced it ({@code fsync.policy=snapshot}); if it did, the file's sync finds little to do.
   */
  @Override
  public boolean link(Path source, String path) throws IOException {
    Path target = resolve(path);
    createDirectories(target.getParent());
    try {
      try {
        Files.createLink(target, source);
      } catch (FileAlreadyExistsException e) {
        Files.delete(target);
        Files.createLink(target, source);
      }
    } catch (UnsupportedOperationException | FileSystemException e) {
      // Another device (EXDEV), a file system without hard links, or no permission to link.
      return false;
    }
    if (sync.enabled()) {
      try (FileChannel channel = FileChannel.open(target, StandardOpenOption.READ)) {
        sync.file(channel);
      }
      sync.directory(target.getParent());
    }
    return true;
  }

  @Override
  public StorageInput open(String path) throws IOException {
    return new FileInput(FileChannel.open(resolve(path), StandardOpenOption.READ), path);
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    return Files.readAllBytes(resolve(path));
  }

  @Override
  public long length(String path) throws IOException {
    return Files.size(resolve(path));
  }

  @Override
  public boolean exists(String path) {
    return Files.isRegularFile(resolve(path));
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    StoragePath.checkPrefix(prefix);
    int slash = prefix.lastIndexOf('/');
    Path start = slash < 0 ? root : root.resolve(prefix.substring(0, slash));
    List<String> paths = new ArrayList<>();
    if (!Files.isDirectory(start)) {
      return paths;
    }
    Files.walkFileTree(
        start,
        new SimpleFileVisitor<Path>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            String relative = relative(file);
            if ((attrs.isRegularFile() || (attrs.isSymbolicLink() && Files.isRegularFile(file)))
                && !file.getFileName().toString().startsWith(TEMP_PREFIX)
                && relative.startsWith(prefix)) {
              paths.add(relative);
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            // Gone between its directory's listing and reading its attributes: a temporary file
            // a concurrent writer renamed, or a file another writer deleted. Like an object
            // store's listing, this one may or may not name what changes while it runs.
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
            if (e != null && !(e instanceof NoSuchFileException)) {
              throw e;
            }
            return FileVisitResult.CONTINUE;
          }
        });
    paths.sort(null);
    return paths;
  }

  @Override
  public void delete(String path) throws IOException {
    // No directory fsync: a deleted file that reappears after a crash is unreferenced garbage,
    // which the engine's orphan cleanup removes again.
    Files.deleteIfExists(resolve(path));
  }

  @Override
  public boolean atomicRename() {
    return true;
  }

  @Override
  public void rename(String source, String target) throws IOException {
    Path from = resolve(source);
    Path to = resolve(target);
    createDirectories(to.getParent());
    moveAtomically(from, to);
    sync.directory(to.getParent());
    if (!from.getParent().equals(to.getParent())) {
      sync.directory(from.getParent());
    }
  }

  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    Path target = resolve(path);
    Path directory = target.getParent();
    createDirectories(directory);
    Path temp = directory.resolve(TEMP_PREFIX + target.getFileName() + "." + UUID.randomUUID());
    boolean published = false;
    try {
      try (FileChannel channel =
          FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer source = ByteBuffer.wrap(bytes);
        while (source.hasRemaining()) {
          channel.write(source);
        }
        // The content must be on disk before the rename can expose it under the real name.
        sync.file(channel);
      }
      moveAtomically(temp, target);
      published = true;
      sync.directory(directory);
    } finally {
      if (!published) {
        Files.deleteIfExists(temp);
      }
    }
  }

  /**
   * Writes a synced temporary file and hard-links it to {@code path}: a link never replaces an
   * existing name, so of two racing creators exactly one succeeds, and the name appears with its
   * whole content.
   */
  @Override
  public boolean createExclusively(String path, byte[] bytes) throws IOException {
    Path target = resolve(path);
    Path directory = target.getParent();
    createDirectories(directory);
    Path temp = directory.resolve(TEMP_PREFIX + target.getFileName() + "." + UUID.randomUUID());
    try {
      try (FileChannel channel =
          FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer source = ByteBuffer.wrap(bytes);
        while (source.hasRemaining()) {
          channel.write(source);
        }
        sync.file(channel);
      }
      try {
        Files.createLink(target, temp);
      } catch (FileAlreadyExistsException e) {
        return Arrays.equals(Files.readAllBytes(target), bytes);
      }
      sync.directory(directory);
      return true;
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return "FileStorage[" + root + (sync.enabled() ? "" : ", fsync off") + "]";
  }

  private Path resolve(String path) {
    return root.resolve(StoragePath.check(path));
  }

  private String relative(Path file) {
    return root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
  }

  private static void moveAtomically(Path from, Path to) throws IOException {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException(
          "The file system under "
              + to.getParent()
              + " cannot rename atomically; Cobble needs that for metadata. Use a local or"
              + " POSIX file system for this volume.",
          e);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(from.toString(), to.toString(), "rename source is missing");
    }
  }

  /**
   * A new, empty file at {@code file}. A file already there is replaced by a new one rather than
   * truncated: its bytes may have a second name ({@link #link}, a checkpoint's hard link) that must
   * keep them.
   */
  private static FileChannel openNew(Path file) throws IOException {
    try {
      return FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (FileAlreadyExistsException e) {
      Files.deleteIfExists(file);
      return FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }
  }

  /** Creates missing directories and syncs each new entry's parent, so the path survives. */
  private void createDirectories(Path directory) throws IOException {
    if (Files.isDirectory(directory)) {
      return;
    }
    Path parent = directory.getParent();
    if (parent != null) {
      createDirectories(parent);
    }
    try {
      Files.createDirectory(directory);
    } catch (FileAlreadyExistsException e) {
      if (!Files.isDirectory(directory)) {
        throw new NotDirectoryException(directory.toString());
      }
      return; // created concurrently by another writer
    }
    if (parent != null) {
      sync.directory(parent);
    }
  }
}
