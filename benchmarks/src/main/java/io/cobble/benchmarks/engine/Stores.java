package io.cobble.benchmarks.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Opens the engine a benchmark parameter names, in a fresh directory. */
final class Stores {
  static final String COBBLE = "COBBLE";
  static final String ROCKSDB = "ROCKSDB";

  private Stores() {}

  static KvStore open(String engine, Path dir) {
    StoreSettings settings = new StoreSettings();
    switch (engine) {
      case COBBLE:
        return new CobbleStore(dir, settings);
      case ROCKSDB:
        return new RocksDbStore(dir, settings);
      default:
        throw new IllegalArgumentException("Unknown engine '" + engine + "'");
    }
  }

  static Path freshDir(String engine) {
    try {
      return Files.createTempDirectory("bench-" + engine.toLowerCase() + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void delete(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
