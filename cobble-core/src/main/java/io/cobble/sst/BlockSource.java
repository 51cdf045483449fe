package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.storage.DataFile;
import io.cobble.util.DirectIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a table's bytes come from: a local file read with positional reads ({@link ChannelSource}),
 * the same with direct I/O for block reads ({@link DirectIoSource}) or with block reads from a
 * memory mapping ({@link MappedSource}), or a file on remote storage read in place with ranged
 * reads ({@link RangedSource}). Thread-safe. Read failures become a {@link CobbleException} (an I/O
 * error) or a {@link io.cobble.CorruptionException} (the file ends early), naming the file.
 */
abstract class BlockSource implements AutoCloseable {
  private final String name;

  BlockSource(String name) {
    this.name = name;
  }

  /**
   * Opens {@code file}. {@code knownSize} (from the manifest, or -1) spares a remote file the
   * length request; {@code directIo} (null = off) applies to local files only, and takes precedence
   * over {@code mmapReads} (local files only as well: a remote file is never mapped).
   */
  static BlockSource open(DataFile file, long knownSize, DirectIo directIo, boolean mmapReads) {
    String name = file.toString();
    try {
      if (!file.isLocal()) {
        return new RangedSource(name, file.openRemote(knownSize));
      }
      Path path = file.localPath();
      if (directIo != null) {
        return new DirectIoSource(name, path, directIo);
      }
      if (mmapReads && MappedSource.fits(Files.size(path))) {
        try {
          return new MappedSource(name, path);
        } catch (IOException e) {
          // No mapping to be had (address space or vm.max_map_count used up): positional reads
          // serve the table as well; a file that cannot be opened fails just below.
        }
      }
      return new ChannelSource(name, path);
    } catch (IOException e) {
      throw new CobbleException("cannot open table " + name, e);
    }
  }

  /** The file's local path or storage URI, for messages. */
  final String name() {
    return name;
  }

  /** The local path; null for a file read in place on remote storage. */
  abstract Path localPath();

  abstract long size();

  /** Reads {@code len} bytes at {@code position} into {@code dst}, as a block read. */
  abstract void readFully(byte[] dst, int len, long position);

  /** Reads {@code len} bytes at {@code position} into {@code dst}, as a large sequential read. */
  void readSequential(byte[] dst, int len, long position) {
    readFully(dst, len, position);
  }

  /**
   * Reads {@code len} bytes at {@code position} into a per-thread direct buffer (the bytes start at
   * its position) when this source reads that way, else returns null. The buffer is valid until the
   * thread's next read or its {@link #doneDirect}, which must follow every non-null result.
   */
  ByteBuffer readDirect(int len, long position) {
    return null;
  }

  /** Ends the use of the buffer the calling thread's last {@link #readDirect} returned. */
  void doneDirect() {}

  /**
   * Forgets a cached copy of the range between here and the file (it failed its checksum); true
   * when a next read may return other bytes.
   */
  boolean dropCached(long position, int len) {
    return false;
  }

  /** Serves reads of the last {@code bytes} of the file from memory until {@link #releaseTail}. */
  void holdTail(int bytes) {}

  void releaseTail() {}

  @Override
  public abstract void close() throws IOException;

  final CobbleException readError(IOException e) {
    return new CobbleException("cannot read table " + name, e);
  }

  final io.cobble.CorruptionException shortRead(int len, long position) {
    return new io.cobble.CorruptionException(
        name, "unexpected end of file reading " + len + " bytes at " + position);
  }
}
