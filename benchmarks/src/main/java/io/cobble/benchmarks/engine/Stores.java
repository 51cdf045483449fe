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
    return open(engine, dir, "");
  }

  /**
   * As {@link #open(String, Path)}, with extra Cobble config entries ({@code key=value;...}, for
   * Cobble-only variants such as {@code direct-io.enabled=true}); RocksDB ignores them.
   */
  static KvStore open(String engine, Path dir, String cobbleOptions) {
    StoreSettings settings = new StoreSettings();
    switch (engine) {
      case COBBLE:
        return new CobbleStore(dir, settings, cobbleOptions);
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
