package io.cobble.it.realcluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Looks for a secret in files. Log files written by the cluster harness's log4j layout ({@code
 * <date> <time> <LEVEL> <logger> ... - <message>}) are read entry by entry, so that each hit is
 * attributed to the logger whose entry (message and stack trace lines) holds it.
 */
final class SecretScan {

  private static final Pattern LOG_ENTRY =
      Pattern.compile("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d{3} +[A-Z]+ +(\\S+)");

  private SecretScan() {}

  /** One occurrence: the file, and for log files the logger of the entry (else null). */
  static final class Hit {
    final Path file;
    final String logger;

    Hit(Path file, String logger) {
      this.file = file;
      this.logger = logger;
    }

    boolean fromLoggerUnder(String prefix) {
      return logger != null && logger.startsWith(prefix);
    }

    @Override
    public String toString() {
      return file + (logger == null ? "" : " (logger " + logger + ")");
    }
  }

  /** Every regular file under {@code root} (links followed) whose bytes contain {@code secret}. */
  static List<Path> filesContaining(Path root, String secret) throws IOException {
    byte[] needle = secret.getBytes(StandardCharsets.UTF_8);
    List<Path> hits = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(Files::isRegularFile).collect(Collectors.toList())) {
        if (contains(Files.readAllBytes(file), needle)) {
          hits.add(file);
        }
      }
    }
    return hits;
  }

  /**
   * The log entries in {@code logDir} that contain {@code secret}. Lines before the first entry of
   * a file (a JVM's stdout) get a null logger.
   */
  static List<Hit> logEntriesContaining(Path logDir, String secret) throws IOException {
    List<Hit> hits = new ArrayList<>();
    try (Stream<Path> files = Files.list(logDir)) {
      for (Path file : files.filter(Files::isRegularFile).sorted().collect(Collectors.toList())) {
        String logger = null;
        boolean hitInEntry = false;
        for (String line : Files.readAllLines(file, StandardCharsets.ISO_8859_1)) {
          Matcher entry = LOG_ENTRY.matcher(line);
          if (entry.find()) {
            logger = entry.group(1);
            hitInEntry = false;
          }
          if (!hitInEntry && line.contains(secret)) {
            hitInEntry = true;
            hits.add(new Hit(file, logger));
          }
        }
      }
    }
    return hits;
  }

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
