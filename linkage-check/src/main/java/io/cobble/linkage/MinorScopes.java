package io.cobble.linkage;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Which Flink minors a class of one module is loaded on. A line module serves several minors, but a
 * class chosen at run time by the line's shim (for example an adapter compiled against 2.1 inside
 * the 2.0 line) is only ever loaded on some of them, and must link exactly there. Declared per
 * package or per class; the longest declared prefix wins, so one class can narrow its package.
 * Undeclared classes are loaded on every minor the line serves.
 *
 * <p>Declaration lines: {@code <module> <package-or-class> <minor>...}, where a minor is {@code
 * 2.1} (the 2.1 patch releases) or {@code 2.1+} (2.1 and every later minor the line serves); {@code
 * #} starts a comment.
 */
final class MinorScopes {
  /** module -> (binary name prefix with '/' -> minor patterns). */
  private final Map<String, Map<String, List<String>>> scopes;

  private MinorScopes(Map<String, Map<String, List<String>>> scopes) {
    this.scopes = scopes;
  }

  /** The modules that declare minor-specific classes. */
  java.util.Set<String> modules() {
    return scopes.keySet();
  }

  static MinorScopes none() {
    return new MinorScopes(Collections.emptyMap());
  }

  static MinorScopes parse(List<String> lines) {
    Map<String, Map<String, List<String>>> scopes = new TreeMap<>();
    for (String raw : lines) {
      String line = raw.replaceAll("#.*", "").trim();
      if (line.isEmpty()) {
        continue;
      }
      String[] parts = line.split("\\s+");
      if (parts.length < 3) {
        throw new IllegalArgumentException(
            "minor scope '" + raw + "': expected <module> <package-or-class> <minor>...");
      }
      List<String> minors = Arrays.asList(parts).subList(2, parts.length);
      for (String minor : minors) {
        if (!minor.matches("\\d+\\.\\d+\\+?")) {
          throw new IllegalArgumentException(
              "minor scope '" + raw + "': '" + minor + "' is not a minor like 2.1 or 2.1+");
        }
      }
      List<String> previous =
          scopes
              .computeIfAbsent(parts[0], m -> new TreeMap<>())
              .put(parts[1].replace('.', '/'), List.copyOf(minors));
      if (previous != null) {
        throw new IllegalArgumentException(
            "minor scope for " + parts[1] + " in " + parts[0] + " is declared twice");
      }
    }
    return new MinorScopes(scopes);
  }

  static MinorScopes fromResource(String name) {
    try (InputStream in = MinorScopes.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("no resource " + name);
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      return parse(reader.lines().collect(Collectors.toList()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The minors among {@code served} (oldest first) that {@code className} (binary name with '/') of
   * {@code module} is loaded on.
   *
   * @throws IllegalArgumentException when a declaration selects none of them: a class that links
   *     nowhere is a mistake in the declaration, not a class to skip
   */
  List<FlinkMinor> minorsOf(String module, String className, List<FlinkMinor> served) {
    Map<String, List<String>> declared = scopes.getOrDefault(module, Collections.emptyMap());
    String best = null;
    for (String prefix : declared.keySet()) {
      boolean matches =
          className.equals(prefix)
              || className.startsWith(prefix + "/")
              || className.startsWith(prefix + "$");
      if (matches && (best == null || prefix.length() > best.length())) {
        best = prefix;
      }
    }
    if (best == null) {
      return served;
    }
    List<String> patterns = declared.get(best);
    List<FlinkMinor> selected = new ArrayList<>();
    for (FlinkMinor minor : served) {
      if (patterns.stream().anyMatch(p -> selects(p, minor.version()))) {
        selected.add(minor);
      }
    }
    if (selected.isEmpty()) {
      throw new IllegalArgumentException(
          module
              + ": "
              + className
              + " is declared for Flink "
              + patterns
              + " but the module serves none of them");
    }
    return selected;
  }

  private static boolean selects(String pattern, String version) {
    boolean andLater = pattern.endsWith("+");
    int[] wanted = majorMinor(andLater ? pattern.substring(0, pattern.length() - 1) : pattern);
    int[] actual = majorMinor(version);
    int cmp =
        actual[0] != wanted[0]
            ? Integer.compare(actual[0], wanted[0])
            : Integer.compare(actual[1], wanted[1]);
    return andLater ? cmp >= 0 : cmp == 0;
  }

  private static int[] majorMinor(String version) {
    String[] parts = version.split("\\.");
    return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
  }
}
