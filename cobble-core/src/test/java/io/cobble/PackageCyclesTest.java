package io.cobble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The engine's layering, read from the compiled main classes: no dependency cycle between packages.
 * Each subpackage of {@code io.cobble} is one node. The root package holds both the public entry
 * points ({@link Db}) and the types every layer uses (exceptions, {@link Config}), so each of its
 * top-level classes is a node of its own: a layer may throw {@link CobbleException}, but nothing
 * that {@link Db} uses may use {@link Db}, and two root classes may not use each other.
 */
class PackageCyclesTest {
  private static final Pattern CLASS_NAME = Pattern.compile("io/cobble/[A-Za-z0-9_/$]+");

  // Node -> the nodes it uses, and for each edge one class that makes it.
  private static final Map<String, Map<String, String>> GRAPH = new TreeMap<>();

  @BeforeAll
  static void readClasses() throws IOException, URISyntaxException {
    Path root = Paths.get(Db.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertTrue(Files.isDirectory(root.resolve("io/cobble")), "compiled classes in " + root);
    List<Path> classes;
    try (Stream<Path> s = Files.walk(root)) {
      classes = s.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
    }
    for (Path c : classes) {
      String name = root.relativize(c).toString().replace('\\', '/').replace(".class", "");
      String from = node(name);
      Map<String, String> uses = GRAPH.computeIfAbsent(from, k -> new TreeMap<>());
      for (String used : referencedClasses(c)) {
        String to = node(used);
        if (!to.equals(from)) {
          uses.putIfAbsent(to, name.replace('/', '.') + " -> " + used.replace('/', '.'));
        }
      }
    }
  }

  @Test
  void noCycleBetweenPackages() {
    List<Set<String>> cycles = stronglyConnected();
    StringBuilder why = new StringBuilder();
    for (Set<String> cycle : cycles) {
      why.append("\ncycle: ").append(cycle);
      for (String a : cycle) {
        for (Map.Entry<String, String> e : GRAPH.getOrDefault(a, Map.of()).entrySet()) {
          if (cycle.contains(e.getKey())) {
            why.append("\n  ").append(e.getValue());
          }
        }
      }
    }
    assertEquals(List.of(), cycles, why.toString());
  }

  @Test
  void checkFindsACycle() {
    // The check itself must see the edges it guards: the facade uses the version layer, which
    // uses the root package's exceptions but not the facade.
    assertTrue(GRAPH.get("io.cobble.Db").containsKey("io.cobble.version"));
    assertTrue(GRAPH.get("io.cobble.version").containsKey("io.cobble.CobbleException"));
    GRAPH.get("io.cobble.version").put("io.cobble.Db", "injected");
    try {
      assertTrue(
          stronglyConnected().stream()
              .anyMatch(c -> c.contains("io.cobble.Db") && c.contains("io.cobble.version")));
    } finally {
      GRAPH.get("io.cobble.version").remove("io.cobble.Db");
    }
  }

  @Test
  void iteratorsStayBelowTheVersionLayer() {
    assertTrue(GRAPH.containsKey("io.cobble.iterator"));
    assertEquals(
        null,
        GRAPH.get("io.cobble.iterator").get("io.cobble.version"),
        "io.cobble.iterator must not use io.cobble.version (LevelIterator takes RunFiles)");
  }

  /** Root-package classes are nodes of their own (nested classes count as their outer class). */
  private static String node(String internalName) {
    int slash = internalName.lastIndexOf('/');
    String pkg = internalName.substring(0, slash).replace('/', '.');
    if (!pkg.equals("io.cobble")) {
      return pkg;
    }
    String simple = internalName.substring(slash + 1);
    int dollar = simple.indexOf('$');
    return pkg + "." + (dollar < 0 ? simple : simple.substring(0, dollar));
  }

  /** Every io.cobble class named in the class file's constant pool (classes and descriptors). */
  private static Set<String> referencedClasses(Path classFile) throws IOException {
    Set<String> out = new TreeSet<>();
    try (InputStream in = Files.newInputStream(classFile);
        DataInputStream data = new DataInputStream(in)) {
      if (data.readInt() != 0xCAFEBABE) {
        throw new IOException("not a class file: " + classFile);
      }
      data.readUnsignedShort();
      data.readUnsignedShort();
      int count = data.readUnsignedShort();
      for (int i = 1; i < count; i++) {
        int tag = data.readUnsignedByte();
        switch (tag) {
          case 1:
            Matcher m = CLASS_NAME.matcher(data.readUTF());
            while (m.find()) {
              String name = m.group();
              if (name.lastIndexOf('/') > "io/cobble".length() - 1) {
                out.add(name);
              }
            }
            break;
          case 7:
          case 8:
          case 16:
          case 19:
          case 20:
            data.skipBytes(2);
            break;
          case 15:
            data.skipBytes(3);
            break;
          case 3:
          case 4:
          case 9:
          case 10:
          case 11:
          case 12:
          case 17:
          case 18:
            data.skipBytes(4);
            break;
          case 5:
          case 6:
            data.skipBytes(8);
            i++;
            break;
          default:
            throw new IOException("unknown constant tag " + tag + " in " + classFile);
        }
      }
    }
    return out;
  }

  /** Tarjan's strongly connected components with more than one node. */
  private static List<Set<String>> stronglyConnected() {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<Set<String>> out = new ArrayList<>();
    int[] counter = {0};
    for (String n : GRAPH.keySet()) {
      if (!index.containsKey(n)) {
        connect(n, index, low, stack, onStack, out, counter);
      }
    }
    return out;
  }

  private static void connect(
      String n,
      Map<String, Integer> index,
      Map<String, Integer> low,
      Deque<String> stack,
      Set<String> onStack,
      List<Set<String>> out,
      int[] counter) {
    index.put(n, counter[0]);
    low.put(n, counter[0]++);
    stack.push(n);
    onStack.add(n);
    for (String m : GRAPH.getOrDefault(n, Map.of()).keySet()) {
      if (!index.containsKey(m)) {
        connect(m, index, low, stack, onStack, out, counter);
        low.put(n, Math.min(low.get(n), low.get(m)));
      } else if (onStack.contains(m)) {
        low.put(n, Math.min(low.get(n), index.get(m)));
      }
    }
    if (low.get(n).equals(index.get(n))) {
      Set<String> component = new TreeSet<>();
      String m;
      do {
        m = stack.pop();
        onStack.remove(m);
        component.add(m);
      } while (!m.equals(n));
      if (component.size() > 1) {
        out.add(component);
      }
    }
  }
}
