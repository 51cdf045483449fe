package io.cobble.vlog;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Positional, thread-safe reads of value-log records with checksum verification. */
public final class ValueLogReader implements AutoCloseable {
  private final Path path;
  private final FileChannel channel;
  private final long size;

  public ValueLogReader(Path path) {
    this.path = path;
    try {
      channel = FileChannel.open(path, StandardOpenOption.READ);
      size = channel.size();
    } catch (IOException e) {
      throw new CobbleException("cannot open value log " + path, e);
    }
    byte[] header = new byte[ValueLogWriter.HEADER];
    if (size < header.length) {
      close();
      throw new CorruptionException(path, "value log shorter than its header");
    }
    read(header, 0);
    if (Bytes.getLong(header, 0) != ValueLogWriter.MAGIC) {
      close();
      throw new CorruptionException(path, "bad value log magic");
    }
    if (Bytes.getInt(header, 8) != ValueLogWriter.VERSION) {
      close();
      throw new CorruptionException(
          path, "unsupported value log version " + Bytes.getInt(header, 8));
    }
  }

  private void read(byte[] dst, long position) {
    ByteBuffer bb = ByteBuffer.wrap(dst);
    try {
      while (bb.hasRemaining()) {
        if (channel.read(bb, position + bb.position()) < 0) {
          throw new CorruptionException(path, "unexpected end of value log at " + position);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot read value log " + path, e);
    }
  }

  public byte[] read(byte[] pointer) {
    long[] p = ValuePointer.decode(pointer);
    long offset = p[1];
    int len = (int) p[2];
    if (offset < ValueLogWriter.HEADER || offset + 8L + len > size) {
      throw new CorruptionException(
          path, "value pointer out of range: offset " + offset + " length " + len);
    }
    byte[] rec = new byte[len + 8];
    read(rec, offset);
    if (Bytes.getInt(rec, 0) != len) {
      throw new CorruptionException(
          path,
          "value record at "
              + offset
              + " has length "
              + Bytes.getInt(rec, 0)
              + ", expected "
              + len);
    }
    if (Crc.crc32c(rec, 4, len) != Bytes.getInt(rec, 4 + len)) {
      throw new CorruptionException(path, "value record checksum mismatch at offset " + offset);
    }
    return java.util.Arrays.copyOfRange(rec, 4, 4 + len);
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Released either way.
    }
  }
}
