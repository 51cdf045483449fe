package io.cobble.flink.table.sink;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Another process for lock tests: {@code hold <file>} locks the file the way a Db locks its {@code
 * LOCK}, prints {@code locked} and keeps the lock until its standard input closes; {@code probe
 * <file>} prints {@code held} or {@code free} for whether some other process holds the lock.
 */
public final class LockHolder implements AutoCloseable {

  private final Process process;

  private LockHolder(Process process) {
    this.process = process;
  }

  /** Starts a child JVM in {@code mode} on {@code file} and returns it after its first line. */
  static LockHolder start(String mode, Path file, List<String> firstLine) throws Exception {
    Process process =
        new ProcessBuilder(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                LockHolder.class.getName(),
                mode,
                file.toString())
            .redirectErrorStream(true)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    firstLine.add(line);
    return new LockHolder(process);
  }

  /** Whether another process than this one holds the lock on {@code file}. */
  static boolean heldByAnotherProcess(Path file) throws Exception {
    List<String> line = new ArrayList<>();
    try (LockHolder probe = start("probe", file, line)) {
      if (!"held".equals(line.get(0)) && !"free".equals(line.get(0))) {
        throw new AssertionError("probe said " + line.get(0));
      }
      return "held".equals(line.get(0));
    }
  }

  @Override
  public void close() throws Exception {
    process.getOutputStream().close();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    try (FileChannel channel =
            FileChannel.open(
                Paths.get(args[1]), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock()) {
      if (args[0].equals("probe")) {
        out.println(lock == null ? "held" : "free");
        out.flush();
        return;
      }
      out.println(lock == null ? "not locked" : "locked");
      out.flush();
      while (System.in.read() >= 0) {
        // Holds the lock until the parent closes the pipe.
      }
    }
  }
}
