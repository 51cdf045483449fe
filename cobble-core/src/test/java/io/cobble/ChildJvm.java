package io.cobble;

import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Child JVMs for crash tests: the test's own JDK and class path, so a test can kill a writer. */
public final class ChildJvm {
  private ChildJvm() {}

  /** A process running {@code main} with {@code args}, with the JVM's default heap. */
  public static ProcessBuilder of(Class<?> main, String... args) {
    return withHeap(null, main, args);
  }

  /** As {@link #of}, with {@code -Xmx<maxHeap>} (e.g. {@code 256m}) when not null. */
  public static ProcessBuilder withHeap(String maxHeap, Class<?> main, String... args) {
    return withOptions(maxHeap == null ? List.of() : List.of("-Xmx" + maxHeap), main, args);
  }

  /** As {@link #of}, with the given JVM options (collector, heap) before the class name. */
  public static ProcessBuilder withOptions(List<String> jvmOptions, Class<?> main, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    command.addAll(Arrays.asList(args));
    return new ProcessBuilder(command);
  }
}
