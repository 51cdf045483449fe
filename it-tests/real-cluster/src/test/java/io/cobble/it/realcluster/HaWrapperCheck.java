package io.cobble.it.realcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.it.cluster.FlinkCluster;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Cobble's HA wrapper as the {@code high-availability.type} of a real standalone cluster (delegate
 * NONE, ZooKeeper-free: none-mode {@code standalone} on the 1.x lines, {@code auto} on 2.x, where
 * it must choose standalone: embedded services would keep the TaskManager from ever finding the
 * ResourceManager). It runs on the cluster of {@link RealClusterExactlyOnceIT} for one minor per
 * line, with its {@link StatefulSqlJob}: the sidecars appear next to a checkpoint once it
 * completes, and the checkpoint directory vanishes whole when Flink subsumes it (its non-recursive
 * delete would fail on a sidecar left behind); the checkpoint retained on cancel keeps its
 * sidecars, and {@code CheckpointReader} lists the same content from them as from {@code _metadata}
 * alone. The job restored from that checkpoint is the test's own job B.
 */
final class HaWrapperCheck {

  private static final String WRAPPER =
      "io.cobble.flink.state.CobbleHighAvailabilityServicesFactory";
  private static final String SIDECAR = "_cobble-checkpoint";
  private static final int RETAINED = 2;
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  private HaWrapperCheck() {}

  /** Whether {@code version} is the first selected minor of its line. */
  static boolean runsOn(String version) {
    Map<String, String> first = new LinkedHashMap<>();
    for (String minor : RealClusterIT.minors()) {
      first.putIfAbsent(RealClusterIT.lineOf(minor), minor);
    }
    return first.containsValue(version);
  }

  /** The wrapper and a retention of {@value #RETAINED} checkpoints in the cluster configuration. */
  static void configure(FlinkCluster.Builder builder, String version) {
    builder
        .config("high-availability.type", WRAPPER)
        .config("cobble.ha.delegate.type", "NONE")
        .config(
            StatefulSqlJob.checkpointDirKey(version).startsWith("state.")
                ? "state.checkpoints.num-retained"
                : "execution.checkpointing.num-retained",
            String.valueOf(RETAINED));
    if (!RealClusterIT.lineOf(version).startsWith("2.")) {
      builder.config("cobble.ha.delegate.none-mode", "standalone");
    }
  }

  /**
   * While job A runs: a checkpoint gets its sidecars, and once {@value #RETAINED} newer ones
   * completed Flink removes its directory whole.
   */
  static void assertSidecarsFollowCheckpoints(StatefulSqlJob job, Path checkpoints)
      throws Exception {
    Path jobDir = checkpoints.resolve(job.jobA());
    long first = awaitCheckpointWithSidecars(jobDir);
    job.awaitCompletedCheckpoint(first + RETAINED);
    awaitGone(jobDir.resolve("chk-" + first));
  }

  /**
   * The checkpoint job A retained on cancel keeps its sidecars, and {@code CheckpointReader} lists
   * the same from them as from {@code _metadata} once they are removed.
   */
  static void assertReaderSeesTheSameWithoutSidecars(FlinkCluster cluster, String retainedUri)
      throws Exception {
    Path retained = Paths.get(URI.create(retainedUri));
    assertTrue(
        Files.isRegularFile(retained.resolve(SIDECAR)),
        "the checkpoint retained on cancel has no sidecars: " + list(retained));
    String viaSidecars = listing(cluster, retained);
    assertTrue(viaSidecars.startsWith("source SIDECARS\n"), viaSidecars);
    // The join's two sides and the aggregation's accumulators, the job's Cobble states.
    for (String state :
        List.of(
            "state left-records (MAP)", "state right-records (MAP)", "state accState (VALUE)")) {
      assertTrue(viaSidecars.contains(state), "no " + state + " in:\n" + viaSidecars);
    }
    for (Path f : list(retained)) {
      if (f.getFileName().toString().startsWith("_cobble-")) {
        Files.delete(f);
      }
    }
    String viaMetadata = listing(cluster, retained);
    assertTrue(viaMetadata.startsWith("source METADATA\n"), viaMetadata);
    assertEquals(
        withoutFirstLine(viaSidecars),
        withoutFirstLine(viaMetadata),
        "CheckpointReader from the sidecars and from _metadata");
  }

  /** Waits until some chk-N of the job holds the sidecars; returns N. */
  private static long awaitCheckpointWithSidecars(Path jobDir) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (true) {
      for (Map.Entry<Long, Path> chk : checkpointDirs(jobDir).entrySet()) {
        if (Files.exists(chk.getValue().resolve(SIDECAR))) {
          return chk.getKey();
        }
      }
      assertTrue(
          System.nanoTime() < deadline,
          "no checkpoint with Cobble sidecars within " + TIMEOUT + ": " + checkpointDirs(jobDir));
      Thread.sleep(100);
    }
  }

  private static void awaitGone(Path chk) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (Files.exists(chk)) {
      assertTrue(
          System.nanoTime() < deadline,
          "subsumed " + chk + " was not removed within " + TIMEOUT + "; it holds " + list(chk));
      Thread.sleep(100);
    }
  }

  private static Map<Long, Path> checkpointDirs(Path jobDir) throws Exception {
    Map<Long, Path> dirs = new TreeMap<>();
    if (!Files.isDirectory(jobDir)) {
      return dirs;
    }
    for (Path p : list(jobDir)) {
      String name = p.getFileName().toString();
      if (name.startsWith("chk-")) {
        dirs.put(Long.parseLong(name.substring(4)), p);
      }
    }
    return dirs;
  }

  private static List<Path> list(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.collect(Collectors.toList());
    } catch (java.nio.file.NoSuchFileException e) {
      return List.of();
    }
  }

  private static String withoutFirstLine(String text) {
    return text.substring(text.indexOf('\n') + 1);
  }

  /**
   * Runs {@link CheckpointListing} on the checkpoint in a child JVM whose class path is the
   * cluster's {@code lib/} (Flink and the Cobble dist jar), as a tool next to the cluster would.
   */
  private static String listing(FlinkCluster cluster, Path checkpoint) throws Exception {
    String classes =
        Paths.get(
                CheckpointListing.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            .toString();
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(FlinkCluster.JDK17_MODULE_FLAGS);
    command.add("-Djava.io.tmpdir=" + cluster.home().resolve("tmp"));
    command.add("-cp");
    command.add(cluster.libDir().resolve("*") + File.pathSeparator + classes);
    command.add(CheckpointListing.class.getName());
    command.add(checkpoint.toString());
    Path out = Files.createTempFile(cluster.home(), "listing", ".out");
    Path err = Files.createTempFile(cluster.home(), "listing", ".err");
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    try {
      assertTrue(process.waitFor(2, TimeUnit.MINUTES), "CheckpointListing did not end");
    } finally {
      process.destroyForcibly();
    }
    String stdout = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
    assertEquals(
        0,
        process.exitValue(),
        "CheckpointListing failed:\n"
            + stdout
            + new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
    return stdout;
  }
}
