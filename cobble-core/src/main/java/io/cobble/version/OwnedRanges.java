package io.cobble.version;

import io.cobble.storage.MetadataFile;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The bucket ranges a shrunk or expanded Db owns, as inclusive [lo, hi] pairs in the metadata file
 * {@code RANGES} (in the Db's directory, or on its remote primary volume); it overrides the
 * configured {@code bucket-ranges} once written.
 */
public final class OwnedRanges {
  public static final String FILE_NAME = "RANGES";

  private OwnedRanges() {}

  public static void write(Path dbDir, int[] pairs) {
    MetadataFile.publishIn(dbDir, FILE_NAME, encode(pairs));
  }

  public static Optional<int[]> read(Path dbDir) {
    return MetadataFile.readIn(dbDir, FILE_NAME).map(OwnedRanges::decode);
  }

  /** The payload of the metadata file (also published on a remote primary volume). */
  static byte[] encode(int[] pairs) {
    ByteWriter w = new ByteWriter(32);
    w.writeVarInt(pairs.length);
    for (int p : pairs) {
      w.writeVarInt(p);
    }
    return w.toByteArray();
  }

  static int[] decode(byte[] payload) {
    ByteReader r = new ByteReader(payload);
    int[] pairs = new int[r.readVarInt()];
    for (int i = 0; i < pairs.length; i++) {
      pairs[i] = r.readVarInt();
    }
    return pairs;
  }

  /** {@code 0-9,20-29} */
  public static String format(int[] pairs) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < pairs.length; i += 2) {
      b.append(i == 0 ? "" : ",").append(pairs[i]).append('-').append(pairs[i + 1]);
    }
    return b.toString();
  }
}
