package io.cobble.version;

import io.cobble.storage.MetadataFile;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The bucket ranges a shrunk Db still owns, as inclusive [lo, hi] pairs in the metadata file {@code
 * RANGES}; it overrides the configured {@code bucket-ranges} once written.
 */
public final class OwnedRanges {
  public static final String FILE_NAME = "RANGES";

  private OwnedRanges() {}

  public static void write(Path dbDir, int[] pairs) {
    ByteWriter w = new ByteWriter(32);
    w.writeVarInt(pairs.length);
    for (int p : pairs) {
      w.writeVarInt(p);
    }
    MetadataFile.publishIn(dbDir, FILE_NAME, w.toByteArray());
  }

  public static Optional<int[]> read(Path dbDir) {
    return MetadataFile.readIn(dbDir, FILE_NAME)
        .map(
            b -> {
              ByteReader r = new ByteReader(b);
              int[] pairs = new int[r.readVarInt()];
              for (int i = 0; i < pairs.length; i++) {
                pairs[i] = r.readVarInt();
              }
              return pairs;
            });
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
