package io.cobble.flink.fs;

import io.cobble.storage.ReadRange;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Cobble {@link Storage} on any file system Flink reaches (HDFS, ABFS, GCS, OSS, S3 through Flink's
 * plugins), rooted at one URI. Files are written straight to their names (the engine never reuses a
 * name while it may be read); {@link #publishAtomically} writes a temporary name and renames it,
 * since a rename is the one step every such file system makes whole. Renames are not treated as
 * atomic replacements ({@link #atomicRename()} is false): some file systems refuse to rename onto
 * an existing file, and the fallback deletes the target first.
 */
final class FlinkFileSystemStorage implements Storage {

  /** Temporary names of unfinished publications; never listed. */
  private static final String TEMP_MARKER = ".cobble-tmp-";

  private final URI uri;
  private final FileSystem fs;
  private final Path base;

  FlinkFileSystemStorage(URI uri, FileSystem fs) {
    this.uri = uri;
    this.fs = fs;
    String path = uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath();
    this.base = new Path(uri.getScheme(), uri.getAuthority(), path);
  }

  private Path resolve(String relative) {
    return relative.isEmpty() ? base : new Path(base, relative);
  }

  @Override
  public URI uri() {
    return uri;
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    return new Output(fs.create(resolve(path), FileSystem.WriteMode.OVERWRITE));
  }

  @Override
  public StorageInput open(String path) throws IOException {
    Path file = resolve(path);
    return new Input(openStream(file, path), length(path), path);
  }

  private FSDataInputStream openStream(Path file, String path) throws IOException {
    try {
      return fs.open(file);
    } catch (FileNotFoundException e) {
      throw missing(path, e);
    }
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    try (InputStream in = openStream(resolve(path), path)) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        out.write(buffer, 0, n);
      }
      return out.toByteArray();
    }
  }

  @Override
  public long length(String path) throws IOException {
    try {
      return fs.getFileStatus(resolve(path)).getLen();
    } catch (FileNotFoundException e) {
      throw missing(path, e);
    }
  }

  @Override
  public boolean exists(String path) throws IOException {
    return fs.exists(resolve(path));
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    int slash = prefix.lastIndexOf('/');
    String dir = slash < 0 ? "" : prefix.substring(0, slash + 1);
    List<String> files = new ArrayList<>();
    collect(dir, prefix, files);
    Collections.sort(files);
    return files;
  }

  private void collect(String dir, String prefix, List<String> files) throws IOException {
    FileStatus[] entries;
    try {
      entries = fs.listStatus(resolve(dir.isEmpty() ? "" : dir.substring(0, dir.length() - 1)));
    } catch (FileNotFoundException e) {
      return;
    }
    if (entries == null) {
      return;
    }
    for (FileStatus entry : entries) {
      String name = entry.getPath().getName();
      String relative = dir + name;
      if (entry.isDir()) {
        String subdir = relative + "/";
        // Only descend where a listed path can start with the prefix.
        if (subdir.startsWith(prefix) || prefix.startsWith(subdir)) {
          collect(subdir, prefix, files);
        }
      } else if (relative.startsWith(prefix) && !name.contains(TEMP_MARKER)) {
        files.add(relative);
      }
    }
  }

  @Override
  public void delete(String path) throws IOException {
    fs.delete(resolve(path), false);
  }

  @Override
  public boolean atomicRename() {
    return false;
  }

  @Override
  public void rename(String source, String target) throws IOException {
    Path from = resolve(source);
    Path to = resolve(target);
    IOException refused = null;
    try {
      if (fs.rename(from, to)) {
        return;
      }
    } catch (IOException e) {
      // Some file systems refuse an existing target with an exception instead of false.
      refused = e;
    }
    if (!fs.exists(from)) {
      throw new NoSuchFileException(uri + "/" + source);
    }
    if (refused != null && !fs.exists(to)) {
      throw refused;
    }
    fs.delete(to, false);
    if (!fs.rename(from, to)) {
      throw new IOException("Cannot rename " + uri + "/" + source + " to " + target);
    }
  }

  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    int slash = path.lastIndexOf('/');
    String temp =
        path.substring(0, slash + 1)
            + TEMP_MARKER
            + UUID.randomUUID()
            + "-"
            + path.substring(slash + 1);
    try (StorageOutput out = create(temp)) {
      out.write(bytes);
    }
    try {
      rename(temp, path);
    } catch (IOException e) {
      fs.delete(resolve(temp), false);
      throw e;
    }
  }

  @Override
  public void close() {
    // Flink caches its file systems per process and closes them itself.
  }

  private NoSuchFileException missing(String path, FileNotFoundException cause) {
    NoSuchFileException e = new NoSuchFileException(uri + "/" + path);
    e.initCause(cause);
    return e;
  }

  @Override
  public String toString() {
    return "FlinkFileSystemStorage[" + uri + "]";
  }

  /** Positional reads on one stream, one at a time: Flink's streams are not thread-safe. */
  private static final class Input implements StorageInput {
    private final FSDataInputStream in;
    private final long length;
    private final String path;

    Input(FSDataInputStream in, long length, String path) {
      this.in = in;
      this.length = length;
      this.path = path;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public synchronized void readFully(long position, byte[] buffer, int offset, int len)
        throws IOException {
      ReadRange.check(position, len, length, path);
      in.seek(position);
      int done = 0;
      while (done < len) {
        int n = in.read(buffer, offset + done, len - done);
        if (n < 0) {
          throw new EOFException("End of " + path + " at " + (position + done));
        }
        done += n;
      }
    }

    @Override
    public synchronized void close() throws IOException {
      in.close();
    }
  }

  private static final class Output extends StorageOutput {
    private final FSDataOutputStream out;

    Output(FSDataOutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public boolean sync() throws IOException {
      out.flush();
      out.sync();
      return true;
    }

    @Override
    public long position() {
      try {
        return out.getPos();
      } catch (IOException e) {
        throw new IllegalStateException("Cannot read the write position", e);
      }
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
