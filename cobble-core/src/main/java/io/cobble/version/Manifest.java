package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.schema.Schema;
import io.cobble.sst.TableProperties;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Full snapshot of a DB's durable state: schema, bucket count, next file number, every table with
 * its tree and level, and the value-log files. Layout: magic (8), format version (4), payload
 * length (4), payload, CRC32C of everything before it (4). Written to a temporary name, fsynced and
 * renamed, so a reader sees either the old or the new snapshot.
 *
 * <p>The Db keeps the previous manifest beside the newest one, and keeps every file the previous
 * one references (see {@link VersionSet}), so a newest manifest that fails its checksum is treated
 * as absent and the Db opens from the previous one, whole.
 */
public final class Manifest {
  public static final String PREFIX = "MANIFEST-";
  static final long MAGIC = 0x436f62626c654d46L; // "CobbleMF"
  static final int VERSION = 1;

  /** A table entry of the manifest. */
  public static final class FileEntry {
    public final int family;
    public final int level;
    public final long number;
    public final long size;
    public final TableProperties properties;

    public FileEntry(int family, int level, long number, long size, TableProperties properties) {
      this.family = family;
      this.level = level;
      this.number = number;
      this.size = size;
      this.properties = properties;
    }
  }

  public final int totalBuckets;
  public final long nextFileNumber;
  public final Schema schema;
  public final List<FileEntry> files;
  public final List<ValueLogFile> vlogs;

  public Manifest(
      int totalBuckets,
      long nextFileNumber,
      Schema schema,
      List<FileEntry> files,
      List<ValueLogFile> vlogs) {
    this.totalBuckets = totalBuckets;
    this.nextFileNumber = nextFileNumber;
    this.schema = schema;
    this.files = files;
    this.vlogs = vlogs;
  }

  public static String fileName(long seq) {
    return String.format("%s%06d", PREFIX, seq);
  }

  public byte[] encode() {
    ByteWriter p = new ByteWriter(1024);
    p.writeVarInt(totalBuckets);
    p.writeVarLong(nextFileNumber);
    schema.encode(p);
    p.writeVarInt(files.size());
    for (FileEntry f : files) {
      p.writeVarInt(f.family);
      p.writeVarInt(f.level);
      p.writeVarLong(f.number);
      p.writeVarLong(f.size);
      f.properties.encode(p);
    }
    p.writeVarInt(vlogs.size());
    for (ValueLogFile f : vlogs) {
      p.writeVarLong(f.number());
      p.writeVarLong(f.size());
      p.writeVarLong(f.entries());
    }
    ByteWriter w = new ByteWriter(p.size() + 20);
    w.writeLong(MAGIC);
    w.writeInt(VERSION);
    w.writeInt(p.size());
    w.writeBytes(p.array(), 0, p.size());
    w.writeInt(Crc.crc32c(w.array(), 0, w.size()));
    return w.toByteArray();
  }

  public static Manifest decode(Path file, byte[] b) {
    return decode(file.toString(), b);
  }

  /** Decodes a manifest read from {@code file} (a path or URI, for messages). */
  public static Manifest decode(String file, byte[] b) {
    if (b.length < 20 || Bytes.getLong(b, 0) != MAGIC) {
      throw new CorruptionException(file, "not a Cobble manifest (bad magic or too short)");
    }
    if (Crc.crc32c(b, 0, b.length - 4) != Bytes.getInt(b, b.length - 4)) {
      throw new CorruptionException(file, "manifest checksum mismatch");
    }
    int version = Bytes.getInt(b, 8);
    if (version != VERSION) {
      throw new CorruptionException(file, "unsupported manifest version " + version);
    }
    int len = Bytes.getInt(b, 12);
    if (len != b.length - 20) {
      throw new CorruptionException(file, "manifest length mismatch");
    }
    try {
      ByteReader r = new ByteReader(b, 16, len);
      int buckets = r.readVarInt();
      long next = r.readVarLong();
      Schema schema = Schema.decode(r);
      int n = r.readVarInt();
      List<FileEntry> files = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        files.add(
            new FileEntry(
                r.readVarInt(),
                r.readVarInt(),
                r.readVarLong(),
                r.readVarLong(),
                TableProperties.decode(r)));
      }
      int nv = r.readVarInt();
      List<ValueLogFile> vlogs = new ArrayList<>();
      for (int i = 0; i < nv; i++) {
        vlogs.add(new ValueLogFile(r.readVarLong(), r.readVarLong(), r.readVarLong()));
      }
      return new Manifest(buckets, next, schema, files, vlogs);
    } catch (IllegalStateException e) {
      throw new CorruptionException(file, "cannot decode manifest: " + e.getMessage(), e);
    }
  }

  /** Writes {@code bytes} to {@code target} via temp file, fsync (if asked) and atomic rename. */
  public static void writeAtomically(Path target, byte[] bytes, boolean sync) {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer bb = java.nio.ByteBuffer.wrap(bytes);
      while (bb.hasRemaining()) {
        ch.write(bb);
      }
      if (sync) {
        ch.force(true);
      }
    } catch (IOException e) {
      throw new CobbleException("cannot write " + tmp, e);
    }
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new CobbleException("cannot rename " + tmp + " to " + target, e);
    }
    if (sync) {
      syncDirectory(target.getParent());
    }
  }

  /** Makes the rename durable; some platforms cannot open directories, which is tolerated. */
  private static void syncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException ignored) {
      // Not supported on this platform/file system; the rename itself is still atomic.
    }
  }

  /** Numbers of every file (tables and value logs) this manifest references. */
  public Set<Long> fileNumbers() {
    Set<Long> out = new HashSet<>();
    for (FileEntry f : files) {
      out.add(f.number);
    }
    for (ValueLogFile f : vlogs) {
      out.add(f.number());
    }
    return out;
  }

  /** Numbers of the value logs this manifest references. */
  public Set<Long> vlogNumbers() {
    Set<Long> out = new HashSet<>();
    for (ValueLogFile f : vlogs) {
      out.add(f.number());
    }
    return out;
  }

  /** What {@link #recover} found in a Db directory. */
  public static final class Recovered {
    /** The manifest to open from; null for a new Db. */
    public final Manifest manifest;

    /** Its sequence number (0 for a new Db). */
    public final long seq;

    /**
     * Files the previous manifest references, which must stay on disk while it is the fallback;
     * empty when it is absent, unreadable, or the Db opened from it.
     */
    public final Set<Long> previousFiles;

    /** The value logs among {@link #previousFiles}. */
    public final Set<Long> previousVlogs;

    /** {@code previous}: the fallback manifest to keep whole, or null for none. */
    Recovered(Manifest manifest, long seq, Manifest previous) {
      this.manifest = manifest;
      this.seq = seq;
      this.previousFiles = previous == null ? Collections.emptySet() : previous.fileNumbers();
      this.previousVlogs = previous == null ? Collections.emptySet() : previous.vlogNumbers();
    }
  }

  /**
   * Reads the newest manifest in {@code dir}; if it fails its checksum or does not decode, it is
   * treated as absent and the previous one is used. Throws the newest one's {@link
   * CorruptionException} when the previous one is missing or bad too: opening empty would drop the
   * tables on disk.
   */
  public static Recovered recover(Path dir) {
    List<Long> seqs = new ArrayList<>();
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String name = p.getFileName().toString();
        if (name.startsWith(PREFIX) && !name.endsWith(".tmp")) {
          try {
            seqs.add(Long.parseLong(name.substring(PREFIX.length())));
          } catch (NumberFormatException ignored) {
            // Not one of ours.
          }
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot list " + dir, e);
    }
    if (seqs.isEmpty()) {
      return new Recovered(null, 0, null);
    }
    seqs.sort(Collections.reverseOrder());
    long newest = seqs.get(0);
    Long previous = seqs.size() > 1 ? seqs.get(1) : null;
    try {
      Manifest m = read(dir, newest);
      Manifest kept = null;
      if (previous != null) {
        try {
          kept = read(dir, previous);
        } catch (CorruptionException e) {
          // An unreadable fallback protects nothing; the next manifest write replaces it.
        }
      }
      return new Recovered(m, newest, kept);
    } catch (CorruptionException e) {
      if (previous == null) {
        throw e;
      }
      try {
        return new Recovered(read(dir, previous), previous, null);
      } catch (CorruptionException older) {
        e.addSuppressed(older);
        throw e;
      }
    }
  }

  private static Manifest read(Path dir, long seq) {
    Path file = dir.resolve(fileName(seq));
    try {
      return decode(file, Files.readAllBytes(file));
    } catch (IOException e) {
      throw new CobbleException("cannot read " + file, e);
    }
  }
}
