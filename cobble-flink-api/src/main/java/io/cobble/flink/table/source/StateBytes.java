package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The framing of the source's checkpointed state (splits and enumerator state): a magic number, the
 * payload, and a CRC32 of both, so that damaged state fails restore loudly instead of reading rows
 * from a wrong position. The version lives in Flink's {@code SimpleVersionedSerializer}.
 */
final class StateBytes {

  private static final int MAGIC = 0xC0BB1E5C;

  private StateBytes() {}

  interface Writer {
    void write(DataOutputStream out) throws IOException;
  }

  interface Reader<T> {
    T read(DataInputStream in) throws IOException;
  }

  static byte[] write(Writer payload) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeInt(MAGIC);
    payload.write(out);
    out.flush();
    CRC32 crc = new CRC32();
    crc.update(bytes.toByteArray());
    out.writeInt((int) crc.getValue());
    out.flush();
    return bytes.toByteArray();
  }

  static <T> T read(byte[] bytes, String what, Reader<T> payload) throws IOException {
    if (bytes.length < 8) {
      throw new IOException(
          "Cobble source " + what + " state is truncated (" + bytes.length + " bytes)");
    }
    CRC32 crc = new CRC32();
    crc.update(bytes, 0, bytes.length - 4);
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    if (in.readInt() != MAGIC) {
      throw new IOException("Not a Cobble source " + what + " state (wrong magic number)");
    }
    int stored =
        new DataInputStream(
                new ByteArrayInputStream(Arrays.copyOfRange(bytes, bytes.length - 4, bytes.length)))
            .readInt();
    if (stored != (int) crc.getValue()) {
      throw new IOException("Cobble source " + what + " state fails its checksum");
    }
    return payload.read(in);
  }

  static void writeScan(DataOutputStream out, ScanSplit split) throws IOException {
    byte[] bytes = split.toBytes();
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  static ScanSplit readScan(DataInputStream in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return ScanSplit.fromBytes(bytes);
  }

  static void writeScans(DataOutputStream out, List<ScanSplit> splits) throws IOException {
    out.writeInt(splits.size());
    for (ScanSplit split : splits) {
      writeScan(out, split);
    }
  }

  static List<ScanSplit> readScans(DataInputStream in) throws IOException {
    int count = in.readInt();
    List<ScanSplit> splits = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      splits.add(readScan(in));
    }
    return splits;
  }

  static void writeSplit(DataOutputStream out, CobbleSourceSplit split) throws IOException {
    out.writeUTF(split.splitId());
    out.writeLong(split.globalId());
    out.writeInt(split.totalBuckets());
    writeScan(out, split.scan());
    writeScans(out, split.previous());
  }

  static CobbleSourceSplit readSplit(DataInputStream in) throws IOException {
    String id = in.readUTF();
    long globalId = in.readLong();
    int totalBuckets = in.readInt();
    ScanSplit scan = readScan(in);
    return new CobbleSourceSplit(id, globalId, totalBuckets, scan, readScans(in));
  }
}
