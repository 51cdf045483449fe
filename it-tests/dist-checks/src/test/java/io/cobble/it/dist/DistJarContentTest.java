package io.cobble.it.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What every Cobble dist jar must (and must not) contain; one run per Flink line. */
class DistJarContentTest {

  private static final String FACTORY_SERVICE =
      "META-INF/services/org.apache.flink.table.factories.Factory";
  private static final String SHIM_SERVICE = "META-INF/services/io.cobble.flink.shim.FlinkLineShim";

  /** Cobble's own classes. */
  private static final String OWN_PREFIX = "io/cobble/";

  private static final String SHADED_PREFIX = "io/cobble/shaded/";

  /**
   * Third-party packages that may stay where they are, with the reason: JNA's native stub looks up
   * {@code com.sun.jna} classes by their original names, so it cannot be relocated.
   */
  private static final List<String> NOT_RELOCATABLE = Arrays.asList("com/sun/jna/");

  static Path distJar(String line) {
    Path dir = Paths.get(System.getProperty("cobble.it.distDir", "target/dist"));
    String prefix = System.getProperty("cobble.it.distVersionPrefix", "0.1.0-1");
    Path jar = dir.resolve("cobble-flink-dist-" + prefix + "-flink-" + line + ".jar");
    assertTrue(Files.isRegularFile(jar), "missing dist jar " + jar);
    return jar;
  }

  static List<String> entries(JarFile jar) {
    return jar.stream().map(ZipEntry::getName).collect(Collectors.toList());
  }

  static List<String> serviceLines(JarFile jar, String name) throws IOException {
    ZipEntry entry = jar.getEntry(name);
    assertTrue(entry != null, "missing " + name);
    try (InputStream in = jar.getInputStream(entry)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return Arrays.stream(text.split("\\R"))
          .map(l -> l.replaceAll("#.*", "").trim())
          .filter(l -> !l.isEmpty())
          .collect(Collectors.toList());
    }
  }

  /** The class path of an entry, with a multi-release prefix META-INF/versions/N/ removed. */
  static String classPath(String entry) {
    if (entry.startsWith("META-INF/versions/")) {
      String rest = entry.substring("META-INF/versions/".length());
      int slash = rest.indexOf('/');
      return slash < 0 ? "" : rest.substring(slash + 1);
    }
    return entry;
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void bundlesNoFlinkClasses(String line) throws IOException {
    try (JarFile jar = new JarFile(distJar(line).toFile())) {
      List<String> flink =
          entries(jar).stream()
              .filter(e -> classPath(e).startsWith("org/apache/flink/"))
              .collect(Collectors.toList());
      assertEquals(List.of(), flink, "Flink classes must not be bundled");
    }
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void registersTheTableFactory(String line) throws IOException {
    try (JarFile jar = new JarFile(distJar(line).toFile())) {
      List<String> factories = serviceLines(jar, FACTORY_SERVICE);
      assertTrue(
          factories.contains("io.cobble.flink.table.CobbleDynamicTableFactory"),
          "factory service file lists " + factories);
      for (String factory : factories) {
        assertTrue(
            jar.getEntry(factory.replace('.', '/') + ".class") != null,
            "service entry without class: " + factory);
      }
    }
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void registersExactlyTheShimOfItsLine(String line) throws IOException {
    String pkg = "io.cobble.flink.v" + line.replace('.', '_') + ".";
    try (JarFile jar = new JarFile(distJar(line).toFile())) {
      List<String> shims = serviceLines(jar, SHIM_SERVICE);
      assertEquals(1, shims.size(), "shim entries: " + shims);
      assertTrue(shims.get(0).startsWith(pkg), shims.get(0) + " is not in " + pkg);
      assertTrue(
          jar.getEntry(shims.get(0).replace('.', '/') + ".class") != null,
          "shim class missing: " + shims.get(0));
      // The 2.0 line also carries the adapter its shim picks on Flink 2.1 and later.
      List<String> ownPackages =
          line.equals("2.0")
              ? List.of(pkg.replace('.', '/'), "io/cobble/flink/v2_1/")
              : List.of(pkg.replace('.', '/'));
      List<String> otherLineClasses =
          entries(jar).stream()
              .filter(e -> e.matches("io/cobble/flink/v\\d+_\\d+/.*\\.class"))
              .filter(e -> ownPackages.stream().noneMatch(e::startsWith))
              .collect(Collectors.toList());
      assertEquals(List.of(), otherLineClasses, "classes of other lines");
    }
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void relocatesThirdPartyClasses(String line) throws IOException {
    try (JarFile jar = new JarFile(distJar(line).toFile())) {
      List<String> stray = new ArrayList<>();
      for (String entry : entries(jar)) {
        String path = classPath(entry);
        if (!path.endsWith(".class") || path.endsWith("module-info.class")) {
          continue;
        }
        boolean own = path.startsWith(OWN_PREFIX) && !entry.startsWith("META-INF/");
        boolean shaded = path.startsWith(SHADED_PREFIX);
        boolean allowed = NOT_RELOCATABLE.stream().anyMatch(path::startsWith);
        if (!(own || shaded || allowed)) {
          stray.add(entry);
        }
      }
      assertEquals(
          List.of(),
          stray,
          "third-party classes outside "
              + SHADED_PREFIX
              + " (multi-release entries under META-INF/versions/ count too: the dist manifest is"
              + " not Multi-Release, so they are dead copies under the original package; exclude"
              + " META-INF/versions/** of relocated artifacts in the shade filters)");
    }
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void manifestRunsTheCli(String line) throws IOException {
    try (JarFile jar = new JarFile(distJar(line).toFile())) {
      Manifest manifest = jar.getManifest();
      assertTrue(manifest != null, "no manifest");
      assertEquals("io.cobble.CobbleCli", manifest.getMainAttributes().getValue("Main-Class"));
    }
  }

  @ParameterizedTest(name = "flink-{0}")
  @ValueSource(strings = {"1.17", "1.19", "2.0"})
  void javaDashJarPrintsTheCommands(String line) throws Exception {
    Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
    Process process =
        new ProcessBuilder(java.toString(), "-jar", distJar(line).toString(), "--help")
            .redirectErrorStream(true)
            .start();
    process.getOutputStream().close();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = process.getInputStream()) {
                in.transferTo(out);
              } catch (IOException ignored) {
                // the process ended
              }
            });
    reader.start();
    boolean ended = process.waitFor(60, TimeUnit.SECONDS);
    if (!ended) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    reader.join(10_000);
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(ended, "java -jar --help did not end within 60 s: " + text);
    assertEquals(0, process.exitValue(), text);
    assertTrue(text.contains("Usage:"), text);
    assertTrue(text.contains("Commands:"), text);
    assertTrue(text.matches("(?s).*\\n\\s+version\\s.*"), "no 'version' command in: " + text);
    assertTrue(text.matches("(?s).*\\n\\s+help\\s.*"), "no 'help' command in: " + text);
  }
}
