package io.cobble.vlog;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.storage.DataFile;
import io.cobble.storage.StorageInput;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * Positional, thread-safe reads of value-log records with checksum verification. A local log is
 * read with a {@link FileChannel}; a log on remote storage is read in place, one ranged read per
 * record.
 */
public final class ValueLogReader implements AutoCloseable {
  private final String name;
  // Exactly one of channel (local file) and remote (file on remote storage) is set.
  private final FileChannel channel;
  private final StorageInput remote;
  private final long size;

  /** Opens a log; {@code knownSize} (or -1) spares a remote file the length request. */
  public ValueLogReader(DataFile file, long knownSize) {
    this.name = file.toString();
    try {
      if (file.isLocal()) {
        channel = FileChannel.open(file.localPath(), StandardOpenOption.READ);
        remote = null;
        size = channel.size();
      } else {
        channel = null;
        remote = file.openRemote(knownSize);
        size = remote.length();
      }
    } catch (IOException e) {
      throw new CobbleException("cannot open value log " + name, e);
    }
    byte[] header = new byte[ValueLogWriter.HEADER];
    if (size < header.length) {
      close();
      throw new CorruptionException(name, "value log shorter than its header");
    }
    try {
      read(header, 0);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    if (Bytes.getLong(header, 0) != ValueLogWriter.MAGIC) {
      close();
      throw new CorruptionException(name, "bad value log magic");
    }
    if (Bytes.getInt(header, 8) != ValueLogWriter.VERSION) {
      close();
      throw new CorruptionException(
          name, "unsupported value log version " + Bytes.getInt(header, 8));
    }
  }

  private void read(byte[] dst, long position) {
    try {
      if (remote != null) {
        remote.readFully(position, dst, 0, dst.length);
        return;
      }
      ByteBuffer bb = ByteBuffer.wrap(dst);
      while (bb.hasRemaining()) {
        if (channel.read(bb, position + bb.position()) < 0) {
          throw new CorruptionException(name, "unexpected end of value log at " + position);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot read value log " + name, e);
    }
  }

  public byte[] read(byte[] pointer) {
    long[] p = ValuePointer.decode(pointer);
    long offset = p[1];
    int len = (int) p[2];
    if (offset < ValueLogWriter.HEADER || offset + 8L + len > size) {
      throw new CorruptionException(
          name, "value pointer out of range: offset " + offset + " length " + len);
    }
    byte[] rec = new byte[len + 8];
    read(rec, offset);
    // A remote record that fails its checks may be a damaged cached copy: drop it, read again.
    if (remote != null && !intact(rec, len) && remote.dropCached(offset, rec.length)) {
      read(rec, offset);
    }
    if (Bytes.getInt(rec, 0) != len) {
      throw new CorruptionException(
          name,
          "value record at "
              + offset
              + " has length "
              + Bytes.getInt(rec, 0)
              + ", expected "
              + len);
    }
    if (Crc.crc32c(rec, 4, len) != Bytes.getInt(rec, 4 + len)) {
      throw new CorruptionException(name, "value record checksum mismatch at offset " + offset);
    }
    return java.util.Arrays.copyOfRange(rec, 4, 4 + len);
  }

  private static boolean intact(byte[] rec, int len) {
    return Bytes.getInt(rec, 0) == len && Crc.crc32c(rec, 4, len) == Bytes.getInt(rec, 4 + len);
  }

  @Override
  public void close() {
    try {
      if (channel != null) {
        channel.close();
      } else {
        remote.close();
      }
    } catch (IOException ignored) {
      // Released either way.
    }
  }
}
