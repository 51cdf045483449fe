package io.cobble.flink.table.sink;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.flink.ShimLoader;
import io.cobble.flink.table.CobbleSinkOptions;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.PendingSnapshot;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.Storage;
import io.cobble.version.Tree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

/**
 * A sink writer: upserts its bucket range into its own shard, a Cobble {@link Db} in the task's
 * local temporary directory. Before every checkpoint barrier it takes a shard snapshot onto the
 * table root, waits until it is published, and sends it to the committer; the snapshot id is the
 * writer's Flink state (union list state, so a rescaled job sees every previous shard, see {@link
 * ShardStart}). At the end of bounded input it does the same once more, after merging the shard's
 * level-0 files into level 1 (unless {@code sink.compact-at-end-of-input} is off), so a table
 * written once starts its readers on one file per level. A published snapshot stays pinned until a
 * global snapshot covers it, so the shard's own retention never removes a snapshot the committer or
 * a restore still needs.
 */
final class CobbleSinkWriterOperator extends AbstractStreamOperator<ShardCommit>
    implements OneInputStreamOperator<RowData, ShardCommit>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private final TableStorage table;
  private final TableSchemaFile schema;
  private final RowCodec codec;
  private final WriterMemory memory;
  private final boolean compactAtEnd;

  private transient ListState<String> shardState;
  private transient Storage storage;
  private transient Path localDir;
  private transient Db db;
  private transient ShardId shardId;
  private transient SnapshotManager snapshots;
  private transient ShardWriter writer;
  private transient TreeSet<Long> pinned;
  private transient long lastSnapshot;
  // A snapshot whose publication this writer is waiting for: cancelled when the task is.
  private transient PendingSnapshot inFlight;
  private transient boolean ended;
  private transient long writerBufferBytes;

  CobbleSinkWriterOperator(
      TableStorage table,
      TableSchemaFile schema,
      RowCodec codec,
      WriterMemory memory,
      boolean compactAtEnd) {
    this.table = table;
    this.schema = schema;
    this.codec = codec;
    this.memory = memory;
    this.compactAtEnd = compactAtEnd;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    shardState =
        context
            .getOperatorStateStore()
            .getUnionListState(
                new ListStateDescriptor<>(
                    "cobble-sink-shard-snapshots", StringSerializer.INSTANCE));
    List<ShardRef> restored = new ArrayList<>();
    for (String entry : shardState.get()) {
      restored.add(decode(entry));
    }
    TableLayout layout = new TableLayout(schema.bucketCount(), schema.shardCount());
    int index = ShimLoader.current().subtaskIndex(getRuntimeContext());
    storage = table.open();
    publishOrCheckSchema(index);
    localDir = localDirectory(index);
    writerBufferBytes =
        memory.acquire(getOperatorConfig(), getContainingTask().getEnvironment(), this);
    long budget = writerBufferBytes;
    getMetricGroup().addGroup("cobble").gauge("writerBufferBytes", (Gauge<Long>) () -> budget);
    Config config = ShardConfig.of(layout, index, writerBufferBytes);
    ShardStart start =
        ShardStart.open(
            storage, layout, index, restored, localDir, config, codec.valueColumnCount());
    db = start.db();
    shardId = start.id();
    snapshots = SnapshotManager.open(db, storage, shardId.toString());
    pinned = new TreeSet<>();
    lastSnapshot = 0;
    Optional<Long> resumed = start.resumedSnapshot();
    releaseStalePins(resumed);
    if (resumed.isPresent()) {
      snapshots.pin(resumed.get());
      pinned.add(resumed.get());
      lastSnapshot = resumed.get();
    }
    writer = new ShardWriter(db, index, layout, codec, getMetricGroup());
    LOG.info(
        "Cobble sink writer {} writes shard {} of {} in {} with a {}-byte write buffer ({}){}",
        index,
        shardId,
        table.root(),
        localDir,
        writerBufferBytes,
        memory.managed() ? "its reserved managed memory share" : "sink.writer-buffer-memory",
        resumed.map(id -> ", resumed from snapshot " + id).orElse(""));
  }

  @Override
  public void processElement(StreamRecord<RowData> element) {
    writer.write(element.getValue());
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    if (!ended) {
      publishSnapshot(checkpointId, false);
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    shardState.update(Collections.singletonList(shardId + " " + lastSnapshot));
  }

  @Override
  public void endInput() throws Exception {
    boolean compacted = compactAtEnd && compactLevel0();
    publishSnapshot(ShardCommit.END_OF_INPUT, compacted);
    ended = true;
  }

  /**
   * Merges the shard's level-0 files into level 1 in the task thread, before the final snapshot:
   * files the writer closes with below the level-0 trigger would otherwise cost every later point
   * read one more file check per shard. The final snapshot still names every row (a compaction
   * keeps the newest version of each), and until it is committed readers see the last committed
   * global snapshot, so a failure or cancellation here loses nothing. Returns whether files
   * changed.
   *
   * @throws InterruptedException when the task is cancelled during the merge, which is discarded
   *     (Flink interrupts the task thread; the shard is closed with the task)
   */
  private boolean compactLevel0() throws InterruptedException {
    writer.flush();
    db.flush();
    int[] before = filesPerLevel();
    if (before[0] == 0) {
      return false;
    }
    LOG.info(
        "Cobble sink writer of shard {} merges its {} level-0 files into level 1 at the end of"
            + " input ({} files in levels 1+; '{}' turns this off)",
        shardId,
        before[0],
        before[1],
        CobbleSinkOptions.SINK_COMPACT_AT_END_OF_INPUT.key());
    long start = System.nanoTime();
    long bytesIn = db.metrics().compactionBytesIn();
    long bytesOut = db.metrics().compactionBytesOut();
    Thread task = Thread.currentThread();
    if (!db.compactLevel0(task::isInterrupted)) {
      throw new InterruptedException(
          "Cancelled while merging level 0 of Cobble shard "
              + shardId
              + " at the end of input; the merge was discarded");
    }
    int[] after = filesPerLevel();
    LOG.info(
        "Cobble sink writer of shard {} merged level 0 in {} ms: {} bytes read, {} written; files"
            + " in level 0 / levels 1+: {} / {}",
        shardId,
        (System.nanoTime() - start) / 1_000_000,
        db.metrics().compactionBytesIn() - bytesIn,
        db.metrics().compactionBytesOut() - bytesOut,
        after[0],
        after[1]);
    return true;
  }

  /** The shard's files in level 0 and in the levels below it, over every family. */
  private int[] filesPerLevel() {
    int[] files = new int[2];
    for (Tree tree : db.versionSet().current().trees()) {
      for (int level = 0; level < tree.levelCount(); level++) {
        files[level == 0 ? 0 : 1] += tree.level(level).size();
      }
    }
    return files;
  }

  /**
   * Snapshots the shard, waits until the snapshot is on the table root and hands it on. A shard
   * that has not changed since its last snapshot (neither rows nor, with {@code filesChanged},
   * files) hands that one on again: the same files, without another manifest on the table root per
   * idle checkpoint.
   */
  private void publishSnapshot(long checkpointId, boolean filesChanged) throws IOException {
    writer.flush();
    if (lastSnapshot > 0 && !writer.changedSinceSnapshot() && !filesChanged) {
      output.collect(
          new StreamRecord<>(new ShardCommit(checkpointId, shardId.toString(), lastSnapshot)));
      return;
    }
    writer.markSnapshotted();
    PendingSnapshot pending = snapshots.snapshot();
    inFlight = pending;
    try {
      pending.published().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while publishing a snapshot of shard " + shardId, e);
    } catch (ExecutionException e) {
      inFlight = null;
      throw new IOException(
          "Cannot publish snapshot "
              + pending.id()
              + " of shard "
              + shardId
              + " to "
              + table.root(),
          e.getCause());
    }
    inFlight = null;
    snapshots.pin(pending.id());
    pinned.add(pending.id());
    lastSnapshot = pending.id();
    unpinCommitted();
    output.collect(
        new StreamRecord<>(new ShardCommit(checkpointId, shardId.toString(), lastSnapshot)));
  }

  /**
   * Pins are stored on the volume, so those of an earlier attempt or job outlive it; the restored
   * snapshot is pinned again below, and no other snapshot of this shard needs the protection.
   */
  private void releaseStalePins(Optional<Long> resumed) {
    for (long id : snapshots.pinned()) {
      if (!resumed.isPresent() || resumed.get() != id) {
        snapshots.unpin(id);
      }
    }
  }

  /** Releases the pins of snapshots the current global snapshot covers (or supersedes). */
  private void unpinCommitted() {
    Optional<GlobalSnapshot> current = snapshots.store().currentGlobal();
    if (!current.isPresent()) {
      return;
    }
    long committed = -1;
    for (GlobalSnapshot.Part part : current.get().parts()) {
      if (part.shardId().equals(shardId.toString())) {
        committed = part.snapshotId();
      }
    }
    for (Iterator<Long> it = pinned.iterator(); it.hasNext(); ) {
      long id = it.next();
      if (id <= committed) {
        snapshots.unpin(id);
        it.remove();
      }
    }
  }

  private static ShardRef decode(String entry) {
    int space = entry.indexOf(' ');
    return ShardRef.of(entry.substring(0, space), Long.parseLong(entry.substring(space + 1)));
  }

  /**
   * Writer 0 publishes the inspect schema (again, when the writer count changed); every writer
   * refuses a table whose columns or bucket count differ from its own, so two DDLs never mix rows
   * of different shapes in one table.
   */
  private void publishOrCheckSchema(int index) throws IOException {
    Optional<TableSchemaFile> published = TableSchemaFile.read(storage);
    if (published.isPresent()
        && (published.get().firstColumnMismatch(schema).isPresent()
            || published.get().bucketCount() != schema.bucketCount())) {
      throw new IllegalStateException(
          "The Cobble table at "
              + table.root()
              + " was written as "
              + published.get()
              + ", which differs from this sink's "
              + schema);
    }
    if (index == 0 && (!published.isPresent() || !published.get().equals(schema))) {
      schema.publish(storage);
    }
  }

  /**
   * A fresh directory for the shard under one of Flink's temporary directories, after removing
   * those that writers of dead TaskManagers left there.
   */
  private Path localDirectory(int index) throws IOException {
    String[] tmp =
        getContainingTask().getEnvironment().getIOManager().getSpillingDirectoriesPaths();
    WorkDirSweep.of(getContainingTask().getEnvironment().getTaskManagerInfo().getConfiguration())
        .sweep(tmp);
    Path dir = Paths.get(tmp[index % tmp.length]).resolve(WorkDirSweep.PREFIX + UUID.randomUUID());
    Files.createDirectories(dir);
    return dir;
  }

  @Override
  public void close() throws Exception {
    try {
      super.close();
    } finally {
      if (writer != null) {
        writer.detach();
      }
      memory.release(getContainingTask().getEnvironment(), this, writerBufferBytes);
      writerBufferBytes = 0;
      try (AutoCloseable closeStorage = storage;
          AutoCloseable closeDb = db;
          AutoCloseable closeSnapshots = this::closeSnapshots) {
        // Closed in reverse order: snapshot uploads finish before the shard and the volume close.
      } finally {
        deleteLocalDirectory();
      }
    }
  }

  /**
   * Stops the shard's snapshots for good before the task ends: Flink starts the next attempt once
   * this task is closed, and that attempt numbers its snapshots after those on the table root, so
   * an upload still running behind it would publish a snapshot under the same id. A snapshot a
   * cancelled checkpoint left pending is cancelled, and the close waits for the uploads even when
   * the task thread is interrupted.
   */
  private void closeSnapshots() {
    if (snapshots == null) {
      return;
    }
    try {
      if (inFlight != null) {
        snapshots.cancel(inFlight.id());
      }
      snapshots.close();
    } finally {
      unpinCommitted();
    }
  }

  private void deleteLocalDirectory() throws IOException {
    if (localDir == null || !Files.exists(localDir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(localDir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
    localDir = null;
  }
}
