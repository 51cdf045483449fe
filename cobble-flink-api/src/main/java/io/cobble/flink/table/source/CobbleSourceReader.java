package io.cobble.flink.table.source;

import io.cobble.Row;
import io.cobble.reader.Reader;
import io.cobble.reader.SplitScanner;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.flink.table.data.RowData;

/**
 * Reads its splits one after the other, in the order they were assigned, emitting one row per
 * {@link #pollNext} call on the task thread. Reading on the task thread keeps the checkpointed
 * position exact: {@link #snapshotState} runs between two rows, so the split in progress is stored
 * as "continue after the row emitted last" and a restored reader neither skips nor repeats a row.
 *
 * <p>Only the Cobble columns the decoder needs are read ({@link RowDecoder#cobbleColumns()}): the
 * engine neither copies nor loads the values of the others.
 *
 * <p>All splits share one {@link Reader} and so one block cache. In streaming mode the reader
 * refreshes between splits, which closes the shard snapshots no split needs any more.
 *
 * <p>The enumerator pins the snapshots splits read: the reader tells it, when it starts, which
 * splits it holds from its restored state, and when it has finished one.
 */
final class CobbleSourceReader implements SourceReader<RowData, CobbleSourceSplit> {

  private final SourceSettings settings;
  private final RowDecoder decoder;
  private final SourceReaderMetricGroup metrics;
  private final Consumer<SourceEvent> enumerator;
  private final Counter recordsIn;
  private final Counter bytesIn;
  private final ArrayDeque<CobbleSourceSplit> queue = new ArrayDeque<>();
  private CompletableFuture<Void> available = new CompletableFuture<>();
  private boolean noMoreSplits;
  private Storage storage;
  private volatile Reader reader;
  private CobbleSourceSplit split;
  private SplitRows rows;
  // Position of the row emitted last in the split in progress; the resumed split is built only
  // when a checkpoint needs it, not per row.
  private int lastBucket;
  private byte[] lastKey;

  /**
   * @param enumerator sends an event to the enumerator
   */
  CobbleSourceReader(
      SourceSettings settings,
      RowDecoder decoder,
      SourceReaderMetricGroup metrics,
      Consumer<SourceEvent> enumerator) {
    this.settings = settings;
    this.decoder = decoder;
    this.metrics = metrics;
    this.enumerator = enumerator;
    this.recordsIn = metrics.getIOMetricGroup().getNumRecordsInCounter();
    this.bytesIn = metrics.getIOMetricGroup().getNumBytesInCounter();
  }

  @Override
  public void start() {
    ReaderGauges.register(metrics.addGroup("cobble"), () -> reader);
    // Splits added before the start come from the restored state.
    List<String> held = new ArrayList<>();
    queue.forEach(split -> held.add(split.splitId()));
    enumerator.accept(new SplitsHeldEvent(held));
  }

  @Override
  public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
    while (true) {
      if (rows == null && !openNextSplit()) {
        if (noMoreSplits) {
          return InputStatus.END_OF_INPUT;
        }
        if (available.isDone()) {
          available = new CompletableFuture<>();
        }
        return InputStatus.NOTHING_AVAILABLE;
      }
      if (rows.hasNext()) {
        Row row = rows.next();
        lastBucket = rows.bucket();
        lastKey = row.key();
        output.collect(decoder.decode(row));
        recordsIn.inc();
        bytesIn.inc(sizeOf(row));
        return InputStatus.MORE_AVAILABLE;
      }
      finishSplit();
    }
  }

  private boolean openNextSplit() throws IOException {
    CobbleSourceSplit next = queue.poll();
    if (next == null) {
      return false;
    }
    if (reader == null) {
      storage = settings.table().open();
      reader = settings.openReader(storage);
    }
    split = next;
    lastKey = null;
    int[] columns = decoder.cobbleColumns();
    rows =
        next.isChangeSplit()
            ? new ChangedRows(
                reader,
                next.scan(),
                next.previous(),
                ChangedFiles.of(new SnapshotStore(storage), next.scan(), next.previous()),
                columns)
            : new FullRows(
                columns == null ? reader.scan(next.scan()) : reader.scan(next.scan(), columns));
    return true;
  }

  private void finishSplit() {
    rows.close();
    rows = null;
    enumerator.accept(new SplitFinishedEvent(split.splitId()));
    split = null;
    if (settings.streaming()) {
      reader.refresh();
    }
  }

  private static long sizeOf(Row row) {
    long bytes = row.key().length;
    for (byte[] column : row.columns()) {
      bytes += column == null ? 0 : column.length;
    }
    return bytes;
  }

  @Override
  public List<CobbleSourceSplit> snapshotState(long checkpointId) {
    List<CobbleSourceSplit> state = new ArrayList<>(queue.size() + 1);
    if (split != null) {
      state.add(lastKey == null ? split : split.resumeAfter(lastBucket, lastKey));
    }
    state.addAll(queue);
    return state;
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    return available;
  }

  @Override
  public void addSplits(List<CobbleSourceSplit> splits) {
    queue.addAll(splits);
    available.complete(null);
  }

  @Override
  public void notifyNoMoreSplits() {
    noMoreSplits = true;
    available.complete(null);
  }

  @Override
  public void close() throws Exception {
    if (rows != null) {
      rows.close();
      rows = null;
    }
    Reader open = reader;
    reader = null;
    try {
      if (open != null) {
        open.close();
      }
    } finally {
      if (storage != null) {
        storage.close();
      }
    }
  }

  /** Every row of a full split. */
  private static final class FullRows implements SplitRows {
    private final SplitScanner scanner;

    FullRows(SplitScanner scanner) {
      this.scanner = scanner;
    }

    @Override
    public boolean hasNext() {
      return scanner.hasNext();
    }

    @Override
    public Row next() {
      return scanner.next();
    }

    @Override
    public int bucket() {
      return scanner.bucket();
    }

    @Override
    public void close() {
      scanner.close();
    }
  }
}
