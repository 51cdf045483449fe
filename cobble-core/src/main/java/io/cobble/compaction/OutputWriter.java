package io.cobble.compaction;

import io.cobble.row.ColumnLayout;
import io.cobble.row.PlainRow;
import io.cobble.row.RowState;
import io.cobble.sst.Table;
import io.cobble.sst.TableBuilder;
import io.cobble.sst.TableOptions;
import io.cobble.sst.TableProperties;
import io.cobble.sst.WrittenMetadata;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.VersionSet;
import io.cobble.vlog.ValueLogFile;
import io.cobble.vlog.ValueLogWriter;
import io.cobble.vlog.ValuePointer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the rows of one tree into table files for a level: cuts files at the target size, moves
 * values above the separation threshold into a value log, and tracks the per-file expiry, merge
 * write time and value-log reference counts that the manifest keeps. Given the owned buckets
 * ({@link #cutAt}), it also starts a new file where a key's bucket lies in another owned range, so
 * no file spans a bucket the shard does not own.
 */
public final class OutputWriter implements AutoCloseable {
  private final VersionSet versions;
  private final int family;
  private final int schemaId;
  private final TableOptions options;
  private final long targetFileSize;
  private final long separationThreshold;
  private final Opener opener;
  private final ByteWriter rowBuf = new ByteWriter(256);
  private final PlainRow plain = new PlainRow();
  private final List<FileMeta> outputs = new ArrayList<>();
  private final List<ValueLogFile> vlogs = new ArrayList<>();
  private TableBuilder builder;
  private long builderNumber;
  private ValueLogWriter vlog;
  private long maxExpiry;
  private boolean neverExpires;
  private long minMergeWriteTime;
  private Map<Long, Long> vlogRefs;
  private long bytesWritten;
  private OwnedBuckets owned;
  private int builderRange;

  public OutputWriter(
      VersionSet versions,
      int family,
      int schemaId,
      TableOptions options,
      long targetFileSize,
      long separationThreshold,
      Opener opener) {
    this.versions = versions;
    this.family = family;
    this.schemaId = schemaId;
    this.options = options;
    this.targetFileSize = targetFileSize;
    this.separationThreshold = separationThreshold;
    this.opener = opener;
  }

  /** Opens a table file the writer just finished, given what its builder wrote. */
  public interface Opener {
    Table open(long fileNumber, WrittenMetadata written);
  }

  /** Cuts files where consecutive keys lie in different ranges of {@code owned}. */
  public OutputWriter cutAt(OwnedBuckets owned) {
    this.owned = owned;
    return this;
  }

  /**
   * Adds an encoded row (the memtable's form) under a key, both given as slices, skipping a row
   * with no column. A {@link PlainRow} is copied into the table as it is, without decoding it into
   * {@code scratch} and encoding it again, and without a copy of its own; {@code row} must then
   * stay unchanged.
   */
  public void addEncoded(
      byte[] key,
      int keyOff,
      int keyLen,
      ColumnLayout layout,
      byte[] row,
      int rowOff,
      int rowLen,
      RowState scratch,
      ByteReader reader) {
    if (!plain.read(layout, row, rowOff, rowLen, separationThreshold)) {
      scratch.decode(layout, row, rowOff, rowLen, reader);
      if (!scratch.isEmpty()) {
        add(Arrays.copyOfRange(key, keyOff, keyOff + keyLen), scratch);
      }
      return;
    }
    addPlain(key, keyOff, keyLen, row, rowOff, rowLen);
  }

  /**
   * Adds an encoded row as it is, under a key given as the {@code keyLen} bytes of {@code key} at
   * {@code keyOff}, when {@link PlainRow} (at the bottom of the tree: {@link PlainRow#readBottom}
   * with {@code dropBefore}, after {@link RowState#mergesToPuts}) vouches that decoding it and
   * writing the result would store the same bytes; otherwise adds nothing and returns false.
   */
  public boolean addIfPlain(
      byte[] key,
      int keyOff,
      int keyLen,
      ColumnLayout layout,
      byte[] row,
      int rowOff,
      int rowLen,
      boolean bottom,
      long dropBefore) {
    boolean isPlain =
        bottom
            ? plain.readBottom(layout, row, rowOff, rowLen, separationThreshold, dropBefore)
            : plain.read(layout, row, rowOff, rowLen, separationThreshold);
    if (!isPlain && bottom && RowState.mergesToPuts(layout, row, rowOff, rowLen, rowBuf)) {
      // A list merge at the bottom becomes a put of the same bytes: rewritten here, not decoded.
      row = rowBuf.array();
      rowOff = 0;
      rowLen = rowBuf.size();
      isPlain = plain.readBottom(layout, row, rowOff, rowLen, separationThreshold, dropBefore);
    }
    if (!isPlain) {
      return false;
    }
    addPlain(key, keyOff, keyLen, row, rowOff, rowLen);
    return true;
  }

  /** Stores a row {@link #plain} has just read as it is. */
  private void addPlain(byte[] key, int keyOff, int keyLen, byte[] row, int rowOff, int rowLen) {
    cutBefore(key, keyOff);
    startTable();
    noteExpiry(plain.expiry());
    minMergeWriteTime = Math.min(minMergeWriteTime, plain.minMergeWriteTime());
    builder.add(key, keyOff, keyLen, row, rowOff, rowLen);
    afterAdd();
  }

  public void add(byte[] key, RowState row) {
    add(key, 0, key.length, row);
  }

  /**
   * As {@link #add(byte[], RowState)} under the {@code keyLen} bytes of {@code key} at {@code
   * keyOff}.
   */
  public void add(byte[] key, int keyOff, int keyLen, RowState row) {
    cutBefore(key, keyOff);
    startTable();
    for (int i = 0; i < row.size(); i++) {
      byte kind = row.kind(i);
      if (kind != RowState.PUT && kind != RowState.MERGE) {
        continue;
      }
      if (!row.isPointer(i)
          && separationThreshold > 0
          && row.value(i).length > separationThreshold) {
        if (vlog == null) {
          long n = versions.newVlogNumber();
          vlog = new ValueLogWriter(versions.vlogPath(n), n);
        }
        row.setPointer(i, vlog.append(row.value(i)));
      }
      if (row.isPointer(i)) {
        vlogRefs.merge(ValuePointer.fileNumber(row.value(i)), 1L, Long::sum);
      }
      if (kind == RowState.MERGE) {
        minMergeWriteTime = Math.min(minMergeWriteTime, row.writeTime(i));
      }
    }
    noteExpiry(row.maxExpiry());
    rowBuf.reset();
    row.encode(rowBuf);
    builder.add(key, keyOff, keyLen, rowBuf.array(), 0, rowBuf.size());
    afterAdd();
  }

  private void cutBefore(byte[] key, int keyOff) {
    if (owned == null) {
      return;
    }
    int range = owned.rangeOf(Bytes.getShort(key, keyOff));
    if (builder != null && range != builderRange) {
      finishTable();
    }
    builderRange = range;
  }

  private void startTable() {
    if (builder == null) {
      builderNumber = versions.newFileNumber();
      builder = new TableBuilder(versions.tablePath(builderNumber), options);
      maxExpiry = -1;
      neverExpires = false;
      minMergeWriteTime = Long.MAX_VALUE;
      vlogRefs = new HashMap<>();
    }
  }

  /** Folds a row's {@link RowState#maxExpiry} into the file's. */
  private void noteExpiry(long rowExpiry) {
    if (rowExpiry == 0) {
      neverExpires = true;
    } else {
      maxExpiry = Math.max(maxExpiry, rowExpiry);
    }
  }

  private void afterAdd() {
    if (builder.estimatedSize() >= targetFileSize) {
      finishTable();
    }
  }

  private void finishTable() {
    TableProperties props =
        builder.finish(schemaId, neverExpires ? 0 : maxExpiry, minMergeWriteTime, vlogRefs);
    long size = builder.fileSize();
    bytesWritten += size;
    Table table = opener.open(builderNumber, builder.written());
    outputs.add(new FileMeta(builderNumber, family, size, props, table));
    builder = null;
  }

  /** Completes all files (fsynced) and returns the tables written. */
  public List<FileMeta> finish() {
    if (builder != null) {
      finishTable();
    }
    if (vlog != null) {
      vlog.finish(options.sync());
      vlogs.add(new ValueLogFile(vlog.fileNumber(), vlog.size(), vlog.entries()));
      bytesWritten += vlog.size();
      vlog = null;
    }
    return outputs;
  }

  /** Value-log files created by this writer. */
  public List<ValueLogFile> vlogs() {
    return vlogs;
  }

  public long bytesWritten() {
    return bytesWritten;
  }

  /**
   * Gives up on the outputs: deletes the table being built (as {@link #close} does) and returns the
   * tables already completed, which the caller closes and deletes since none was installed.
   */
  public List<FileMeta> abandon() {
    close();
    builder = null;
    vlog = null;
    return outputs;
  }

  /** Deletes anything written when the job fails before its outputs are installed. */
  @Override
  public void close() {
    if (builder != null) {
      builder.close();
    }
    if (vlog != null) {
      vlog.close();
    }
  }
}
