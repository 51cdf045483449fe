package io.cobble.it.realcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretScanTest {

  private static final String SECRET = "9f8e7d6c5b4a";

  @Test
  void attributesEachLogEntryWithTheSecretToItsLogger(@TempDir Path logDir) throws Exception {
    Files.write(
        logDir.resolve("taskmanager.log"),
        List.of(
            "2026-11-30 10:00:00,001 INFO  org.apache.flink.runtime.taskmanager.Task"
                + "                      [] - options 'secret'='"
                + SECRET
                + "'",
            "2026-11-30 10:00:00,002 WARN  io.cobble.flink.sink.CobbleWriter"
                + "                              [] - failed",
            "java.lang.IllegalStateException: bad key " + SECRET,
            "\tat io.cobble.flink.sink.CobbleWriter.open(CobbleWriter.java:1)",
            "2026-11-30 10:00:00,003 INFO  org.apache.flink.runtime.taskmanager.Task"
                + "                      [] - clean line"),
        StandardCharsets.UTF_8);
    Files.write(logDir.resolve("taskmanager.out"), List.of("stdout " + SECRET));

    List<String> loggers =
        SecretScan.logEntriesContaining(logDir, SECRET).stream()
            .map(h -> h.file.getFileName() + ":" + h.logger)
            .collect(Collectors.toList());

    assertEquals(
        List.of(
            "taskmanager.log:org.apache.flink.runtime.taskmanager.Task",
            "taskmanager.log:io.cobble.flink.sink.CobbleWriter",
            "taskmanager.out:null"),
        loggers);
  }

  @Test
  void findsTheSecretInsideBinaryFiles(@TempDir Path root) throws Exception {
    Files.createDirectories(root.resolve("a/b"));
    byte[] bytes = ("\u0000\u0001xx" + SECRET + "yy").getBytes(StandardCharsets.ISO_8859_1);
    Files.write(root.resolve("a/b/blob"), bytes);
    Files.write(root.resolve("a/clean"), "nothing here".getBytes(StandardCharsets.UTF_8));
    assertEquals(List.of(root.resolve("a/b/blob")), SecretScan.filesContaining(root, SECRET));
  }
}
