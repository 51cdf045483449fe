package io.cobble.linkage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** One supported Flink release and the jars that make up its API and runtime classes. */
final class FlinkMinor {
  private final String version;
  private final List<Path> jars;

  FlinkMinor(String version, List<Path> jars) {
    this.version = version;
    this.jars = List.copyOf(jars);
  }

  /**
   * The jars the build copied into {@code <root>/flink-<version>/}. Fails when there are none: a
   * supported minor without jars would otherwise pass unchecked.
   */
  static FlinkMinor copiedInto(Path root, String version) {
    Path dir = root.resolve("flink-" + version);
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> jars =
          files.filter(p -> p.toString().endsWith(".jar")).sorted().collect(Collectors.toList());
      if (jars.isEmpty()) {
        throw new IllegalStateException("no Flink jars in " + dir);
      }
      return new FlinkMinor(version, jars);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "no Flink jars for " + version + " (is its copy execution in linkage-check/pom.xml?)", e);
    }
  }

  String version() {
    return version;
  }

  List<Path> jars() {
    return jars;
  }
}
