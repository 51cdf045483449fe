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
import java.util.List;

/**
 * Full snapshot of a DB's durable state: schema, bucket count, next file number, every table with
 * its tree and level, and the value-log files. Layout: magic (8), format version (4), payload
 * length (4), payload, CRC32C of everything before it (4). Written to a temporary name, fsynced and
 * renamed, so a reader sees either the old or the new snapshot.
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

  /** Reads the newest manifest in {@code dir}, or null when the directory holds none. */
  public static Manifest readLatest(Path dir, long[] seqOut) {
    long best = -1;
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String name = p.getFileName().toString();
        if (name.startsWith(PREFIX) && !name.endsWith(".tmp")) {
          try {
            best = Math.max(best, Long.parseLong(name.substring(PREFIX.length())));
          } catch (NumberFormatException ignored) {
            // Not one of ours.
          }
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot list " + dir, e);
    }
    if (best < 0) {
      return null;
    }
    Path file = dir.resolve(fileName(best));
    seqOut[0] = best;
    try {
      return decode(file, Files.readAllBytes(file));
    } catch (IOException e) {
      throw new CobbleException("cannot read " + file, e);
    }
  }
}
