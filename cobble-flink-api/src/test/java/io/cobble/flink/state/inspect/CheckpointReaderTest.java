package io.cobble.flink.state.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CheckpointFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code _metadata} reader over checkpoints laid out as the Cobble backend writes them: it
 * finds the Cobble operator with its subtasks, key groups and states, picks the newest complete
 * checkpoint of a job directory, reads exactly the values of that checkpoint through a read-only
 * view that leaves the checkpoint's files byte for byte as they were and removes its staged copy on
 * close, and names what is wrong for each kind of bad input.
 */
class CheckpointReaderTest {

  private static final int KEYS = 200;
  private static final OperatorID OPERATOR = new OperatorID(7, 11);

  @TempDir Path tmp;

  @Test
  void listsTheCobbleOperatorWithItsSubtasksAndStates() throws Exception {
    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, 3, OPERATOR, KEYS, 5);

    CobbleCheckpoint checkpoint = CheckpointReader.open(job.resolve("chk-3").toString());

    assertThat(checkpoint.checkpointId()).isEqualTo(3);
    assertThat(checkpoint.operators()).hasSize(1);
    CobbleOperator op = checkpoint.operators().get(0);
    assertThat(op.operatorId()).isEqualTo(OPERATOR.toHexString());
    assertThat(op.parallelism()).isEqualTo(2);
    assertThat(op.maxParallelism()).isEqualTo(CheckpointFixture.KEY_GROUPS);
    assertThat(op.subtasks().stream().map(CobbleOperator.Subtask::index)).containsExactly(0, 1);
    assertThat(op.subtasks().stream().map(CobbleOperator.Subtask::keyGroups))
        .containsExactly(KeyGroupRange.of(0, 63), KeyGroupRange.of(64, 127));
    assertThat(op.states().stream().map(CobbleStateInfo::toString))
        .containsExactly("count (VALUE)", "values (LIST)", "seen (MAP)", "timers (TIMERS)");
    assertThat(op.state("count").valueSerializer().restoreSerializer())
        .isEqualTo(org.apache.flink.api.common.typeutils.base.LongSerializer.INSTANCE);
    assertThat(op.keySerializer().restoreSerializer())
        .isEqualTo(org.apache.flink.api.common.typeutils.base.LongSerializer.INSTANCE);
  }

  @Test
  void aJobDirectoryOpensItsNewestCompleteCheckpointWithExactValues() throws Exception {
    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, 1, OPERATOR, KEYS, 1);
    CheckpointFixture.write(job, 2, OPERATOR, KEYS, 2);
    // Newer, but incomplete (no _metadata yet): never chosen.
    Files.createDirectories(job.resolve("chk-9"));
    Map<Path, String> before = digests(job);

    CobbleCheckpoint checkpoint = CheckpointReader.open(job.toUri().toString());
    assertThat(checkpoint.checkpointId()).isEqualTo(2);
    try (OperatorStateView view = checkpoint.openView(OPERATOR.toHexString())) {
      for (long key = 0; key < KEYS; key++) {
        assertThat(view.<Long>value("count", key))
            .as("count of key %d", key)
            .isEqualTo(CheckpointFixture.count(key, 2));
        assertThat(view.<Long>list("values", key))
            .as("values of %d", key)
            .containsExactly(key, key + 2);
        Map<Long, Long> seen = new HashMap<>();
        seen.put(1L, key);
        seen.put(2L, null);
        assertThat(view.<Long, Long>map("seen", key)).as("seen of %d", key).isEqualTo(seen);
      }
      assertThat(view.<Long>value("count", (long) KEYS + 1)).isNull();
      assertThat(view.<Long>list("values", (long) KEYS + 1)).isEmpty();
      assertThat(view.<Long, Long>map("seen", (long) KEYS + 1)).isEmpty();
      assertThatThrownBy(() -> view.value("values", 1L))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("state values")
          .hasMessageContaining("is a LIST state");
      assertThatThrownBy(() -> view.value("nope", 1L))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("has no state nope")
          .hasMessageContaining("count");
    }
    assertThat(digests(job)).as("the checkpoint's files after reading").isEqualTo(before);

    CobbleCheckpoint older = CheckpointReader.open(job.resolve("chk-1/_metadata").toString());
    try (OperatorStateView view = older.openView(OPERATOR.toHexString())) {
      assertThat(view.<Long>value("count", 42L)).isEqualTo(CheckpointFixture.count(42, 1));
    }
  }

  @Test
  void closingTheViewRemovesItsStagedFiles() throws Exception {
    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, 1, OPERATOR, KEYS, 1);
    Path staging = tmp.resolve("staging");
    OperatorStateView view =
        CheckpointReader.open(job.toString()).openView(OPERATOR.toHexString(), staging);
    assertThat(view.<Long>value("count", 3L)).isEqualTo(CheckpointFixture.count(3, 1));
    assertThat(list(staging)).as("staged while open").hasSize(1);
    view.close();
    assertThat(list(staging)).as("left behind after close").isEmpty();
  }

  @Test
  void aDamagedCobbleMetaFileIsAClearError() throws Exception {
    Path job = tmp.resolve("job");
    Path meta = CheckpointFixture.write(job, 1, OPERATOR, KEYS, 1);
    byte[] bytes = Files.readAllBytes(meta);
    bytes[bytes.length / 2] ^= 0x10;
    Files.write(meta, bytes);

    assertThatThrownBy(() -> CheckpointReader.open(job.toString()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(meta.getFileName().toString())
        .hasMessageContaining("damaged: checksum mismatch");
  }

  @Test
  void badLocationsAreClearErrors() throws Exception {
    assertThatThrownBy(() -> CheckpointReader.open(tmp.resolve("missing").toString()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("does not exist");

    Path empty = Files.createDirectories(tmp.resolve("empty"));
    assertThatThrownBy(() -> CheckpointReader.open(empty.toString()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("is not a checkpoint")
        .hasMessageContaining("no complete chk-N");

    Path garbage = Files.createDirectories(tmp.resolve("garbage"));
    Files.write(garbage.resolve("_metadata"), "hello".getBytes());
    assertThatThrownBy(() -> CheckpointReader.open(garbage.toString()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not a readable Flink checkpoint metadata file");

    Path foreign = tmp.resolve("foreign");
    CheckpointFixture.writeForeign(foreign, OPERATOR);
    assertThatThrownBy(() -> CheckpointReader.open(foreign.toString()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("holds no keyed state of the Cobble state backend");

    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, 1, OPERATOR, KEYS, 1);
    CobbleCheckpoint checkpoint = CheckpointReader.open(job.toString());
    String unknown = new OperatorID(1, 2).toHexString();
    assertThatThrownBy(() -> checkpoint.openView(unknown))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no Cobble operator " + unknown)
        .hasMessageContaining(OPERATOR.toHexString());
  }

  private static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.collect(Collectors.toList());
    }
  }

  private static Map<Path, String> digests(Path dir) throws Exception {
    Map<Path, String> out = new TreeMap<>();
    List<Path> files;
    try (Stream<Path> s = Files.walk(dir)) {
      files = s.filter(Files::isRegularFile).collect(Collectors.toCollection(ArrayList::new));
    }
    for (Path f : files) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      out.put(f, Arrays.toString(md.digest(Files.readAllBytes(f))));
    }
    return out;
  }
}
