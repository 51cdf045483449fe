package io.cobble.linkage;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The class files of one jar or class directory, by internal name. Entries are read on demand: a
 * minor's Flink jars hold tens of thousands of classes and a check touches a few hundred.
 */
final class ClassFiles implements Closeable {
  private static final String SUFFIX = ".class";

  private final Path location;
  private final ZipFile jar;
  private final Set<String> names = new TreeSet<>();

  private ClassFiles(Path location, ZipFile jar) {
    this.location = location;
    this.jar = jar;
  }

  static ClassFiles open(Path location) {
    try {
      if (Files.isDirectory(location)) {
        ClassFiles files = new ClassFiles(location, null);
        try (Stream<Path> walk = Files.walk(location)) {
          walk.filter(Files::isRegularFile)
              .map(p -> location.relativize(p).toString().replace('\\', '/'))
              .forEach(files::addEntry);
        }
        return files;
      }
      ClassFiles files = new ClassFiles(location, new ZipFile(location.toFile()));
      Enumeration<? extends ZipEntry> entries = files.jar.entries();
      while (entries.hasMoreElements()) {
        files.addEntry(entries.nextElement().getName());
      }
      return files;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read classes from " + location, e);
    }
  }

  // Multi-release overlays and module descriptors are not what a Java 11 classpath links against.
  private void addEntry(String entry) {
    if (entry.endsWith(SUFFIX)
        && !entry.startsWith("META-INF/")
        && !entry.endsWith("module-info.class")) {
      names.add(entry.substring(0, entry.length() - SUFFIX.length()));
    }
  }

  /** Internal names (org/apache/flink/Foo) of every class here, sorted. */
  Set<String> names() {
    return Collections.unmodifiableSet(names);
  }

  boolean contains(String internalName) {
    return names.contains(internalName);
  }

  byte[] read(String internalName) {
    String entry = internalName + SUFFIX;
    try {
      if (jar == null) {
        return Files.readAllBytes(location.resolve(entry));
      }
      try (InputStream in = jar.getInputStream(jar.getEntry(entry))) {
        return in.readAllBytes();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + entry + " from " + location, e);
    }
  }

  @Override
  public void close() throws IOException {
    if (jar != null) {
      jar.close();
    }
  }
}
