package io.cobble.it.realcluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * Merges jars into one, the way the recipe's Maven Shade build with {@code
 * ServicesResourceTransformer} does: every class and resource once (first jar wins), and each
 * {@code META-INF/services/} file as the union of its lines from all jars instead of one copy
 * overwriting the others. Signatures and manifests of the inputs are left out.
 */
final class ServicesMergingBundle {

  private static final String SERVICES = "META-INF/services/";

  private ServicesMergingBundle() {}

  static Path write(Path target, List<Path> jars) throws IOException {
    Files.createDirectories(target.getParent());
    Map<String, Set<String>> services = new LinkedHashMap<>();
    Set<String> written = new HashSet<>();
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(target))) {
      for (Path jar : jars) {
        try (JarFile in = new JarFile(jar.toFile())) {
          for (JarEntry entry : java.util.Collections.list(in.entries())) {
            String name = entry.getName();
            if (entry.isDirectory() || isManifestOrSignature(name)) {
              continue;
            }
            if (name.startsWith(SERVICES)) {
              services.computeIfAbsent(name, n -> new LinkedHashSet<>()).addAll(lines(in, entry));
            } else if (written.add(name)) {
              out.putNextEntry(new JarEntry(name));
              try (InputStream data = in.getInputStream(entry)) {
                data.transferTo(out);
              }
              out.closeEntry();
            }
          }
        }
      }
      for (Map.Entry<String, Set<String>> service : services.entrySet()) {
        out.putNextEntry(new JarEntry(service.getKey()));
        write(out, String.join("\n", service.getValue()) + "\n");
        out.closeEntry();
      }
    }
    return target;
  }

  /** The provider lines of a service file, without comments and blanks. */
  static List<String> lines(JarFile jar, JarEntry entry) throws IOException {
    List<String> lines = new ArrayList<>();
    try (InputStream data = jar.getInputStream(entry)) {
      for (String line : new String(data.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String provider = line.replaceAll("#.*", "").trim();
        if (!provider.isEmpty()) {
          lines.add(provider);
        }
      }
    }
    return lines;
  }

  private static boolean isManifestOrSignature(String name) {
    String upper = name.toUpperCase(java.util.Locale.ROOT);
    return upper.equals("META-INF/MANIFEST.MF")
        || (upper.startsWith("META-INF/")
            && upper.indexOf('/', "META-INF/".length()) < 0
            && (upper.endsWith(".SF") || upper.endsWith(".DSA") || upper.endsWith(".RSA")));
  }

  private static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.UTF_8));
  }
}
