package io.cobble.it.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Flink distribution assembled from Maven artifacts: a directory with {@code lib/} (what {@code
 * $FLINK_HOME/lib} holds) and {@code opt/} (the SQL Gateway jar). The module {@code
 * it-tests/cluster-libs/flink-<version>} builds one per minor under {@code target/flink}.
 */
public final class FlinkDistribution {

  private final String version;
  private final Path home;

  private FlinkDistribution(String version, Path home) {
    this.version = Objects.requireNonNull(version);
    this.home = home.toAbsolutePath().normalize();
    if (!Files.isDirectory(libDir())) {
      throw new IllegalArgumentException(
          "No Flink "
              + version
              + " lib/ at "
              + libDir()
              + "; build it-tests/cluster-libs/flink-"
              + version
              + " first (mvn package).");
    }
  }

  /** A distribution whose {@code lib/} and {@code opt/} are directly under {@code home}. */
  public static FlinkDistribution at(String version, Path home) {
    return new FlinkDistribution(version, home);
  }

  /**
   * The distribution built by {@code <clusterLibsRoot>/flink-<version>} ({@code
   * it-tests/cluster-libs}).
   */
  public static FlinkDistribution fromClusterLibs(Path clusterLibsRoot, String version) {
    return new FlinkDistribution(
        version, clusterLibsRoot.resolve("flink-" + version).resolve("target").resolve("flink"));
  }

  public String version() {
    return version;
  }

  public int major() {
    return Integer.parseInt(version.split("[.-]")[0]);
  }

  public int minor() {
    return Integer.parseInt(version.split("[.-]")[1]);
  }

  /** {@code 1.19} for {@code 1.19.3}. */
  public String majorMinor() {
    return major() + "." + minor();
  }

  public Path home() {
    return home;
  }

  public Path libDir() {
    return home.resolve("lib");
  }

  public Path optDir() {
    return home.resolve("opt");
  }

  /** Flink reads {@code flink-conf.yaml} before 1.19 and {@code config.yaml} from 1.19 on. */
  public boolean usesLegacyConfigFile() {
    return major() == 1 && minor() < 19;
  }

  public String configFileName() {
    return usesLegacyConfigFile() ? "flink-conf.yaml" : "config.yaml";
  }

  public List<Path> libJars() {
    return jars(libDir());
  }

  /**
   * Plugins assembled beside {@code lib/} but not enabled ({@code flink-dist} ships them in {@code
   * opt/}); a cluster loads one only when a test adds it with {@link
   * FlinkCluster.Builder#addPlugin}.
   */
  public Path pluginsDir() {
    return home.resolve("plugins");
  }

  /** The jars of the assembled plugin {@code name}, e.g. {@code s3-fs-hadoop}. */
  public List<Path> pluginJars(String name) {
    Path dir = pluginsDir().resolve(name);
    List<Path> jars = Files.isDirectory(dir) ? jars(dir) : List.of();
    if (jars.isEmpty()) {
      throw new IllegalArgumentException(
          "No plugin '"
              + name
              + "' for Flink "
              + version
              + " at "
              + dir
              + "; build it-tests/cluster-libs/flink-"
              + version
              + " first (mvn package).");
    }
    return jars;
  }

  /** The SQL Gateway jar(s); empty when this minor has no gateway on Maven Central. */
  public List<Path> optJars() {
    return Files.isDirectory(optDir()) ? jars(optDir()) : List.of();
  }

  public boolean hasSqlGateway() {
    return optJars().stream()
        .anyMatch(p -> p.getFileName().toString().startsWith("flink-sql-gateway-"));
  }

  /**
   * The default of {@code classloader.parent-first-patterns.default} in this Flink version, read
   * from its own {@code CoreOptions} (so the value is exactly Flink's, whatever the minor).
   */
  public List<String> defaultParentFirstPatterns() {
    Path core =
        libJars().stream()
            .filter(p -> p.getFileName().toString().startsWith("flink-core-"))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no flink-core jar in " + libDir()));
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {core.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
      Class<?> options = Class.forName("org.apache.flink.configuration.CoreOptions", false, loader);
      Field field = options.getField("ALWAYS_PARENT_FIRST_LOADER_PATTERNS");
      Object option = field.get(null);
      Method defaultValue = option.getClass().getMethod("defaultValue");
      Object value = defaultValue.invoke(option);
      if (value instanceof List) {
        return ((List<?>) value).stream().map(String::valueOf).collect(Collectors.toList());
      }
      return Stream.of(String.valueOf(value).split(";")).collect(Collectors.toList());
    } catch (ReflectiveOperationException | IOException e) {
      throw new IllegalStateException("cannot read Flink's parent-first patterns from " + core, e);
    }
  }

  private static List<Path> jars(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(p -> p.getFileName().toString().endsWith(".jar"))
          .sorted()
          .collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String toString() {
    return "Flink " + version + " at " + home;
  }
}
