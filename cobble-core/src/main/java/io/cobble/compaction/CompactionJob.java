package io.cobble.compaction;

import io.cobble.iterator.KvIterator;
import io.cobble.iterator.LevelIterator;
import io.cobble.iterator.RowMergingIterator;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.vlog.ValuePointer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;
import java.util.function.LongPredicate;

/**
 * Executes a MERGE compaction (or one key range of it, see {@link CompactionSplit}): reads inputs
 * (newest first) and overlapping output-level files, folds each key into one row in the newest
 * schema and writes it to the output level. At the bottom of the tree it also resolves merges,
 * drops tombstones and drops values that expired before {@link Compaction#dropExpiredBefore()}.
 */
public final class CompactionJob {
  private final Compaction compaction;
  private final ColumnLayout layout;
  private final ValueLoader loader;
  private final int readAhead;
  private final LongPredicate rewriteVlog;
  private final IntPredicate keepBucket;

  /** Rows merged between two looks at {@link #abandoned}. */
  private static final int ABANDON_CHECK_ROWS = 1024;

  private BooleanSupplier abandoned = () -> false;
  private CompactionFilter filter;
  private boolean passThrough = true;
  private long passedThrough;

  /**
   * {@code rewriteVlog} selects value-log files whose values are copied out (and re-separated into
   * this job's own value log) so that mostly dead logs can be deleted.
   */
  public CompactionJob(
      Compaction compaction,
      ColumnLayout layout,
      ValueLoader loader,
      int readAhead,
      LongPredicate rewriteVlog) {
    this(compaction, layout, loader, readAhead, rewriteVlog, bucket -> true);
  }

  /**
   * {@code keepBucket} says which buckets the shard still owns: rows of other buckets (left behind
   * by a shrink) are dropped, which is how rescale cleans up without rewriting data up front.
   */
  public CompactionJob(
      Compaction compaction,
      ColumnLayout layout,
      ValueLoader loader,
      int readAhead,
      LongPredicate rewriteVlog,
      IntPredicate keepBucket) {
    this.keepBucket = keepBucket;
    this.compaction = compaction;
    this.layout = layout;
    this.loader = loader;
    this.readAhead = readAhead;
    this.rewriteVlog = rewriteVlog;
  }

  /**
   * Makes {@link #run} stop with {@link CompactionAbandoned} once {@code condition} holds (checked
   * every {@value #ABANDON_CHECK_ROWS} rows), so that closing a database need not wait for a merge
   * whose result it would not keep.
   */
  public CompactionJob abandonWhen(BooleanSupplier condition) {
    this.abandoned = condition;
    return this;
  }

  /** Lets {@code filter} drop put values at the bottom of the tree; null keeps them all. */
  public CompactionJob filterWith(CompactionFilter filter) {
    this.filter = filter;
    return this;
  }

  /**
   * Decodes, folds and encodes every row again, as before rows one source decides were stored as
   * read: the reference the pass-through is tested against.
   */
  CompactionJob decodeEveryRow() {
    this.passThrough = false;
    return this;
  }

  /** Rows the last {@link #run} stored as it read them, without decoding them. */
  long rowsPassedThrough() {
    return passedThrough;
  }

  /** Runs the merge into {@code out}; the caller finishes or abandons the writer. */
  public void run(OutputWriter out) {
    List<KvIterator> sources = new ArrayList<>();
    List<String> names = new ArrayList<>();
    if (compaction.inputLevel() == 0) {
      for (FileMeta f : compaction.inputs()) {
        sources.add(f.table().iterator(readAhead));
        names.add(f.table().name());
      }
    } else {
      sources.add(new LevelIterator(compaction.inputs(), readAhead));
      names.add(null);
    }
    if (!compaction.overlaps().isEmpty()) {
      sources.add(new LevelIterator(compaction.overlaps(), readAhead));
      names.add(null);
    }
    boolean bottom = compaction.bottommost();
    long dropBefore = compaction.dropExpiredBefore();
    passedThrough = 0;
    CompactionFilter.ValueFilter dead =
        bottom && filter != null ? filter.forFamily(layout.family().name()) : null;
    try (RowMergingIterator it =
        new RowMergingIterator(sources, names, layout, loader)
            .passThrough(passThrough)
            .upperBound(compaction.upperBound())) {
      if (compaction.lowerBound() == null) {
        it.seekToFirst();
      } else {
        it.seek(compaction.lowerBound());
      }
      int rows = 0;
      for (; it.valid(); it.next()) {
        if (++rows % ABANDON_CHECK_ROWS == 0 && abandoned.getAsBoolean()) {
          throw new CompactionAbandoned();
        }
        if (!keepBucket.test(Bytes.getShort(it.keyArray(), it.keyOffset()))) {
          continue;
        }
        // A row one source decides, with inline values and nothing the bottom drops, is stored
        // as it is read: no decode, no encode.
        if (it.hasEncodedRow()
            && dead == null
            && out.addIfPlain(
                it.keyArray(),
                it.keyOffset(),
                it.keyLength(),
                layout,
                it.encodedRow(),
                it.encodedOffset(),
                it.encodedLength(),
                bottom,
                dropBefore)) {
          passedThrough++;
          continue;
        }
        RowState row = it.row();
        for (int i = 0; i < row.size(); i++) {
          if (row.isPointer(i) && rewriteVlog.test(ValuePointer.fileNumber(row.value(i)))) {
            byte[] value = loader.load(row.value(i));
            row.set(i, row.kind(i), value, false, row.expiry(i), row.writeTime(i));
          }
        }
        if (bottom) {
          row.resolveBottom(loader);
          for (int i = 0; i < row.size(); i++) {
            byte kind = row.kind(i);
            if (kind == RowState.DELETE
                || (kind == RowState.PUT && row.expiry(i) != 0 && row.expiry(i) <= dropBefore)) {
              row.clear(i);
            } else if (dead != null && kind == RowState.PUT) {
              byte[] value = row.isPointer(i) ? loader.load(row.value(i)) : row.value(i);
              byte[] kept = dead.filter(i, value);
              if (kept == null) {
                row.clear(i);
              } else if (kept != value) {
                row.set(i, kind, kept, false, row.expiry(i), row.writeTime(i));
              }
            }
          }
        }
        if (row.isEmpty()) {
          continue;
        }
        out.add(it.keyArray(), it.keyOffset(), it.keyLength(), row);
      }
    }
  }
}
