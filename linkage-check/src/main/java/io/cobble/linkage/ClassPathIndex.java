package io.cobble.linkage;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The classes one check links against: our modules, one Flink minor's jars, and the running JDK.
 * Lookup mirrors Flink's class loading, which is parent-first for {@code org.apache.flink}: a Flink
 * name is looked up in the Flink jars first (then ours, should we ever ship a class into a Flink
 * package), any other name in our jars, then the JDK.
 */
final class ClassPathIndex implements Closeable {
  private final List<ClassFiles> project = new ArrayList<>();
  private final List<ClassFiles> flink = new ArrayList<>();
  private final Map<String, Optional<ClassModel>> cache = new HashMap<>();

  ClassPathIndex(List<Path> projectLocations, List<Path> flinkLocations) {
    projectLocations.forEach(p -> project.add(ClassFiles.open(p)));
    flinkLocations.forEach(p -> flink.add(ClassFiles.open(p)));
  }

  /** The class, or null when no jar of this classpath (nor the JDK) has it. */
  ClassModel find(String internalName) {
    return cache.computeIfAbsent(internalName, n -> Optional.ofNullable(load(n))).orElse(null);
  }

  boolean isProjectClass(String internalName) {
    return project.stream().anyMatch(files -> files.contains(internalName));
  }

  private ClassModel load(String internalName) {
    if (FlinkReference.isFlink(internalName)) {
      ClassModel fromFlink = loadFrom(flink, internalName);
      return fromFlink != null ? fromFlink : loadFrom(project, internalName);
    }
    ClassModel ours = loadFrom(project, internalName);
    return ours != null ? ours : loadFromJdk(internalName);
  }

  private static ClassModel loadFrom(List<ClassFiles> locations, String internalName) {
    for (ClassFiles files : locations) {
      if (files.contains(internalName)) {
        return ClassModel.parse(files.read(internalName));
      }
    }
    return null;
  }

  // Class files of named JDK modules are readable as resources (never encapsulated); the platform
  // loader sees the JDK only, not this test's own classpath.
  private static ClassModel loadFromJdk(String internalName) {
    try (InputStream in =
        ClassLoader.getPlatformClassLoader().getResourceAsStream(internalName + ".class")) {
      return in == null ? null : ClassModel.parse(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws IOException {
    for (ClassFiles files : project) {
      files.close();
    }
    for (ClassFiles files : flink) {
      files.close();
    }
  }
}
