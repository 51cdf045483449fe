package io.cobble;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The data files of a Db directory: those on disk, and those the Db must keep. */
public final class LocalFiles {
  private LocalFiles() {}

  /** Names of the tables and value logs in {@code dir}. */
  public static Set<String> onDisk(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sst") || n.endsWith(".vlog"))
          .collect(Collectors.toSet());
    }
  }

  /** Files of the Db's current version. */
  public static Set<String> current(Db db) {
    Set<String> out = new HashSet<>();
    db.versionSet()
        .current()
        .trees()
        .forEach(t -> t.allFiles().forEach(f -> out.add(String.format("%06d.sst", f.number()))));
    db.versionSet().current().vlogs().forEach(n -> out.add(String.format("%06d.vlog", n)));
    return out;
  }

  /**
   * Files of the current version plus those the previous (fallback) manifest still lists, which
   * stay until a newer manifest replaces it: exactly what a quiet Db leaves in its directory.
   */
  public static Set<String> live(Db db) throws IOException {
    Set<String> live = current(db);
    Set<String> onDisk = onDisk(db.directory());
    for (long n : db.versionSet().previousManifestFiles()) {
      String sst = String.format("%06d.sst", n);
      String vlog = String.format("%06d.vlog", n);
      assertTrue(onDisk.contains(sst) || onDisk.contains(vlog), "fallback file " + n + " missing");
      live.add(onDisk.contains(sst) ? sst : vlog);
    }
    return live;
  }
}
