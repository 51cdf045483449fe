package io.cobble.vlog;

import io.cobble.CobbleException;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import io.cobble.util.NewFile;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Appends separated values to a new value-log file. Layout: 8-byte magic, 4-byte format version,
 * then records of value length (4), value, CRC32C of the value (4).
 */
public final class ValueLogWriter implements AutoCloseable {
  static final long MAGIC = 0x436f62626c65564cL; // "CobbleVL"
  static final int VERSION = 1;
  static final int HEADER = 12;

  private final Path path;
  private final long fileNumber;
  private final NewFile out;
  private long offset;
  private long entries;

  public ValueLogWriter(Path path, long fileNumber) {
    this.path = path;
    this.fileNumber = fileNumber;
    try {
      out = new NewFile(path);
      byte[] header = new byte[HEADER];
      Bytes.putLong(header, 0, MAGIC);
      Bytes.putInt(header, 8, VERSION);
      out.write(header);
      offset = HEADER;
    } catch (IOException e) {
      throw new CobbleException("cannot create value log " + path, e);
    }
  }

  public long fileNumber() {
    return fileNumber;
  }

  public Path path() {
    return path;
  }

  public long entries() {
    return entries;
  }

  /** Appends a value and returns its pointer. */
  public byte[] append(byte[] value) {
    byte[] head = new byte[4];
    Bytes.putInt(head, 0, value.length);
    byte[] crc = new byte[4];
    Bytes.putInt(crc, 0, Crc.crc32c(value, 0, value.length));
    long at = offset;
    try {
      out.write(head);
      out.write(value);
      out.write(crc);
    } catch (IOException e) {
      throw new CobbleException("cannot write value log " + path, e);
    }
    offset += 8 + value.length;
    entries++;
    return ValuePointer.encode(fileNumber, at, value.length);
  }

  public long size() {
    return offset;
  }

  /** Flushes and (when {@code sync}) fsyncs the file. */
  public void finish(boolean sync) {
    try {
      out.finish(sync);
    } catch (IOException e) {
      throw new CobbleException("cannot finish value log " + path, e);
    }
  }

  @Override
  public void close() {
    out.abandon();
  }
}
