package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PendingCommitsTest {

  private static final String A = "g1-0of2";
  private static final String B = "g1-1of2";

  private static ShardCommit at(long checkpoint, String shard, long snapshot) {
    return new ShardCommit(checkpoint, shard, snapshot);
  }

  private static ShardCommit ended(String shard, long snapshot) {
    return new ShardCommit(ShardCommit.END_OF_INPUT, shard, snapshot);
  }

  private static void assertDue(
      Optional<PendingCommits.Due> due, long checkpoint, Map<?, ?> shards) {
    assertTrue(due.isPresent(), "checkpoint " + checkpoint + " should be due");
    assertEquals(checkpoint, due.get().checkpointId);
    assertEquals(shards, due.get().shards);
  }

  @Test
  void alignedCheckpointIsDueWhenCompleted() {
    PendingCommits p = new PendingCommits();
    p.add(at(1, A, 3));
    p.add(at(1, B, 4));
    assertTrue(p.due().isEmpty(), "nothing is due before Flink completes the checkpoint");
    assertDue(p.complete(1), 1, Map.of(A, 3L, B, 4L));
    assertTrue(p.complete(1).isEmpty(), "a due checkpoint is committed once");
  }

  @Test
  void aSnapshotStillInFlightIsWaitedFor() {
    PendingCommits p = new PendingCommits();
    p.add(at(4, A, 1));
    p.add(at(4, B, 1));
    assertDue(p.complete(4), 4, Map.of(A, 1L, B, 1L));
    p.add(at(5, A, 2));
    // Unaligned checkpoints: 5 completes while B's snapshot for 5 is still in the channel.
    assertTrue(p.complete(5).isEmpty(), "must not pair A at 5 with B at 4");
    p.add(at(5, B, 2));
    assertDue(p.due(), 5, Map.of(A, 2L, B, 2L));
  }

  @Test
  void aNewerCompleteCheckpointCoversAnIncompleteOlderOne() {
    PendingCommits p = new PendingCommits();
    p.add(at(5, A, 1));
    p.add(at(6, A, 2));
    p.add(at(6, B, 2));
    assertDue(p.complete(6), 6, Map.of(A, 2L, B, 2L));
    assertTrue(p.state().isEmpty());
  }

  @Test
  void aWriterWhoseInputEndedCountsForLaterCheckpoints() {
    PendingCommits p = new PendingCommits();
    p.add(ended(A, 9));
    p.add(at(7, B, 3));
    p.checkpointTaken(7);
    assertDue(p.complete(7), 7, Map.of(A, 9L, B, 3L));
    p.add(at(8, B, 4));
    p.checkpointTaken(8);
    assertDue(p.complete(8), 8, Map.of(B, 4L));
  }

  @Test
  void stateRestoresPendingSnapshotsAndEndedWriters() {
    PendingCommits p = new PendingCommits();
    p.add(ended(A, 9));
    p.checkpointTaken(3);
    p.add(at(3, B, 5));
    p.add(at(4, B, 6));
    PendingCommits restored = new PendingCommits();
    restored.restore(p.state());
    assertDue(restored.complete(3), 3, Map.of(A, 9L, B, 5L));
    assertDue(restored.complete(4), 4, Map.of(B, 6L));
  }

  @Test
  void endOfInputDrainsEverything() {
    PendingCommits p = new PendingCommits();
    p.add(at(2, A, 1));
    p.add(ended(B, 7));
    assertEquals(Map.of(A, 1L, B, 7L), p.drain());
    assertTrue(p.drain().isEmpty());
  }
}
