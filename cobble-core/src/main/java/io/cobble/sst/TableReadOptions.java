package io.cobble.sst;

import io.cobble.util.DirectIo;

/**
 * How a table is read: which metadata stays pinned outside the block cache ({@code
 * sst.pinned-metadata.*}), whether it is decoded at open or on the first point read ({@code
 * sst.read-metadata-cache.mode}), and whether block reads of local files use direct I/O or a memory
 * mapping.
 */
public final class TableReadOptions {
  /** Nothing pinned, metadata read through the cache, no direct I/O, local files mapped. */
  public static final TableReadOptions UNPINNED = builder().build();

  private final boolean pinTopIndex;
  private final boolean pinPartitions;
  private final boolean lazyMetadata;
  private final DirectIo directIo;
  private final boolean mmapReads;
  private final boolean residentBlocks;

  private TableReadOptions(Builder b) {
    this.pinTopIndex = b.pinTopIndex;
    this.pinPartitions = b.pinTopIndex && b.pinPartitions;
    this.lazyMetadata = b.lazyMetadata;
    this.directIo = b.directIo;
    this.mmapReads = b.mmapReads;
    this.residentBlocks = b.residentBlocks;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Whether the top-level index is kept in memory outside the block cache. */
  public boolean pinTopIndex() {
    return pinTopIndex;
  }

  /** Whether every index and filter partition is kept as well (only with the top-level index). */
  public boolean pinPartitions() {
    return pinPartitions;
  }

  /** Whether the pinned metadata is decoded on the first point read instead of at open. */
  public boolean lazyMetadata() {
    return lazyMetadata;
  }

  /** The direct I/O reader pool for block reads of local files; null when off. */
  public DirectIo directIo() {
    return directIo;
  }

  /** Whether block reads of local files come from a memory mapping (without direct I/O). */
  public boolean mmapReads() {
    return mmapReads;
  }

  /** See {@link Builder#residentBlocks}. */
  public boolean residentBlocks() {
    return residentBlocks;
  }

  public static final class Builder {
    private boolean pinTopIndex;
    private boolean pinPartitions;
    private boolean lazyMetadata;
    private DirectIo directIo;
    private boolean mmapReads = true;
    private boolean residentBlocks;

    private Builder() {}

    public Builder pinTopIndex(boolean pin) {
      this.pinTopIndex = pin;
      return this;
    }

    public Builder pinPartitions(boolean pin) {
      this.pinPartitions = pin;
      return this;
    }

    public Builder lazyMetadata(boolean lazy) {
      this.lazyMetadata = lazy;
      return this;
    }

    /** Direct I/O for block reads of local files; null (the default) reads through the cache. */
    public Builder directIo(DirectIo directIo) {
      this.directIo = directIo;
      return this;
    }

    /**
     * Block reads of local files from a read-only memory mapping (the default), instead of a
     * positional read per block; ignored with direct I/O and for remote files.
     */
    public Builder mmapReads(boolean mmap) {
      this.mmapReads = mmap;
      return this;
    }

    /**
     * Keeps each data block a point read brings in for as long as the table is open ({@link
     * ResidentBlocks}), in memory reserved from the block cache. Only for tables nobody compacts
     * away under a long-lived reader (a read-only Db's); applies when partitions are pinned.
     */
    public Builder residentBlocks(boolean resident) {
      this.residentBlocks = resident;
      return this;
    }

    public TableReadOptions build() {
      return new TableReadOptions(this);
    }
  }
}
