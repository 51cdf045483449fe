package io.cobble.it.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A child JVM of the harness, stopped by its own PID only. */
public final class ManagedProcess {

  private final String name;
  private final Process process;
  private final Path outFile;
  private final Path logFile;

  private ManagedProcess(String name, Process process, Path outFile, Path logFile) {
    this.name = name;
    this.process = process;
    this.outFile = outFile;
    this.logFile = logFile;
  }

  static ManagedProcess start(
      String name,
      List<String> command,
      Map<String, String> environment,
      Path workDir,
      Path outFile,
      Path logFile) {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.directory(workDir.toFile());
    builder.environment().putAll(environment);
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(outFile.toFile()));
    builder.redirectInput(ProcessBuilder.Redirect.PIPE);
    try {
      Process process = builder.start();
      process.getOutputStream().close();
      return new ManagedProcess(name, process, outFile, logFile);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + ": " + command, e);
    }
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code, or -1 while running. */
  public int exitCode() {
    return process.isAlive() ? -1 : process.exitValue();
  }

  /** Stdout and stderr of the JVM. */
  public Path outFile() {
    return outFile;
  }

  /** The Flink log file of the JVM ({@code -Dlog.file}). */
  public Path logFile() {
    return logFile;
  }

  /** SIGKILL, then waits (bounded) until the process is gone. */
  public void kill(Duration wait) {
    process.destroyForcibly();
    waitFor(wait);
  }

  /** SIGTERM; after {@code grace} SIGKILL; waits (bounded) for the end either way. */
  public void stop(Duration grace) {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    if (!waitFor(grace)) {
      process.destroyForcibly();
      waitFor(Duration.ofSeconds(15));
    }
  }

  private boolean waitFor(Duration wait) {
    try {
      return process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    }
  }

  @Override
  public String toString() {
    return name
        + "(pid "
        + process.pid()
        + (isAlive() ? ", running)" : ", exit " + exitCode() + ")");
  }
}
