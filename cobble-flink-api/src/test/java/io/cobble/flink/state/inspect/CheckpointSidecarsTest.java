package io.cobble.flink.state.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CheckpointFixture;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sidecar files: written from a checkpoint's operator states they describe the same Cobble
 * operators, subtasks, states and values as its {@code _metadata}, and the reader prefers them
 * (shown by deleting {@code _metadata}); a flipped byte in either sidecar is a clear error naming
 * the file; removing them leaves exactly the checkpoint's own files and the reader falls back to
 * {@code _metadata}.
 */
class CheckpointSidecarsTest {

  private static final OperatorID OPERATOR = new OperatorID(3, 5);

  @TempDir Path tmp;

  @Test
  void sidecarsDescribeTheSameStateAndTheReaderPrefersThem() throws Exception {
    Path chk = writeWithSidecars(4);
    // Without _metadata only the sidecars can answer.
    Files.move(chk.resolve("_metadata"), tmp.resolve("_metadata.moved"));
    Files.write(chk.resolve("_metadata"), new byte[] {0});

    CobbleCheckpoint checkpoint = CheckpointReader.open(chk.toString());
    assertThat(checkpoint.source()).isEqualTo(CobbleCheckpoint.Source.SIDECARS);
    assertThat(checkpoint.checkpointId()).isEqualTo(4);
    CobbleOperator op = checkpoint.operator(OPERATOR.toHexString());
    assertThat(op.parallelism()).isEqualTo(2);
    assertThat(op.maxParallelism()).isEqualTo(CheckpointFixture.KEY_GROUPS);
    assertThat(op.subtasks()).hasSize(2);
    assertThat(op.states().stream().map(CobbleStateInfo::toString))
        .containsExactly("count (VALUE)", "values (LIST)", "seen (MAP)", "timers (TIMERS)");
    try (OperatorStateView view = checkpoint.openView(OPERATOR.toHexString(), tmp.resolve("s"))) {
      for (long key = 0; key < 50; key++) {
        assertThat(view.<Long>value("count", key)).isEqualTo(CheckpointFixture.count(key, 4));
        assertThat(view.<Long>list("values", key)).containsExactly(key, key + 4);
      }
    }
  }

  @Test
  void aFlippedByteInASidecarIsAClearError() throws Exception {
    for (String name :
        new String[] {
          CheckpointSidecars.GLOBAL, CheckpointSidecars.OPERATOR_PREFIX + OPERATOR.toHexString()
        }) {
      Path chk = writeWithSidecars(1);
      Path file = chk.resolve(name);
      byte[] bytes = Files.readAllBytes(file);
      bytes[14] ^= 0x01;
      Files.write(file, bytes);
      assertThatThrownBy(() -> CheckpointReader.open(chk.toString()))
          .as(name)
          .isInstanceOf(IOException.class)
          .hasMessageContaining(name)
          .hasMessageContaining("damaged: checksum mismatch");
      bytes[0] ^= 0x01;
      Files.write(file, bytes);
      assertThatThrownBy(() -> CheckpointReader.open(chk.toString()))
          .as(name)
          .isInstanceOf(IOException.class)
          .hasMessageContaining("is not a Cobble sidecar");
      clean();
    }
  }

  @Test
  void removingTheSidecarsLeavesTheCheckpointAsFlinkWroteIt() throws Exception {
    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, 2, OPERATOR, 50, 2);
    Path chk = job.resolve("chk-2");
    List<Path> before = list(chk);
    assertThat(
            CheckpointSidecars.write(
                2, new org.apache.flink.core.fs.Path(chk.toUri()), load(chk).getOperatorStates()))
        .isEqualTo(1);
    assertThat(list(chk)).hasSize(before.size() + 2);

    CheckpointSidecars.remove(new org.apache.flink.core.fs.Path(chk.toUri()));

    assertThat(list(chk)).isEqualTo(before);
    CobbleCheckpoint checkpoint = CheckpointReader.open(chk.toString());
    assertThat(checkpoint.source()).isEqualTo(CobbleCheckpoint.Source.METADATA);
  }

  @Test
  void aCheckpointWithoutCobbleStateGetsNoSidecars() throws Exception {
    Path chk = tmp.resolve("foreign");
    CheckpointFixture.writeForeign(chk, OPERATOR);
    assertThat(
            CheckpointSidecars.write(
                1, new org.apache.flink.core.fs.Path(chk.toUri()), load(chk).getOperatorStates()))
        .isZero();
    assertThat(list(chk)).containsExactly(chk.resolve("_metadata"));
  }

  private Path writeWithSidecars(long id) throws Exception {
    Path job = tmp.resolve("job");
    CheckpointFixture.write(job, id, OPERATOR, 50, id);
    Path chk = job.resolve("chk-" + id);
    CheckpointSidecars.write(
        id, new org.apache.flink.core.fs.Path(chk.toUri()), load(chk).getOperatorStates());
    return chk;
  }

  private void clean() throws IOException {
    try (Stream<Path> s = Files.walk(tmp.resolve("job"))) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static CheckpointMetadata load(Path chk) throws IOException {
    try (InputStream in = Files.newInputStream(chk.resolve("_metadata"))) {
      return Checkpoints.loadCheckpointMetadata(
          new DataInputStream(in), CheckpointSidecarsTest.class.getClassLoader(), chk.toString());
    }
  }

  private static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().collect(Collectors.toList());
    }
  }
}
