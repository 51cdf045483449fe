package io.cobble.sst;

/**
 * How a table file is built: block size and restart interval, bloom filter bits per key (0 = no
 * filter), whether data blocks carry a {@link DataBlockHash} index, partitioned index, LZ4
 * compression, and whether the finished file is fsynced. Derived from the Config and the output
 * level; build with {@link #builder()}.
 */
public final class TableOptions {
  final int blockSize;
  final int restartInterval;
  final boolean bloom;
  final int bitsPerKey;
  final boolean dataBlockHash;
  final boolean partitioned;
  final boolean lz4;
  final boolean sync;
  final int prefixLength;

  private TableOptions(Builder b) {
    this.blockSize = b.blockSize;
    this.restartInterval = b.restartInterval;
    this.bloom = b.bloomBitsPerKey > 0;
    this.bitsPerKey = b.bloomBitsPerKey;
    this.dataBlockHash = b.dataBlockHash;
    this.partitioned = b.partitionedIndex;
    this.lz4 = b.lz4;
    this.sync = b.sync;
    this.prefixLength = b.prefixLength;
  }

  /**
   * Defaults: 4 KiB blocks, restart interval 16, no bloom filter, no data-block hash index, one
   * index, raw, no fsync.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Whether finished files are fsynced. */
  public boolean sync() {
    return sync;
  }

  public static final class Builder {
    private int blockSize = 4096;
    private int restartInterval = 16;
    private int bloomBitsPerKey;
    private boolean dataBlockHash;
    private boolean partitionedIndex;
    private boolean lz4;
    private boolean sync;
    private int prefixLength;

    private Builder() {}

    public Builder blockSize(int bytes) {
      this.blockSize = bytes;
      return this;
    }

    public Builder restartInterval(int entries) {
      this.restartInterval = entries;
      return this;
    }

    /** Bloom filter bits per key; 0 writes no filter. */
    public Builder bloomBitsPerKey(int bits) {
      this.bloomBitsPerKey = bits;
      return this;
    }

    /** Whether data blocks carry a hash index for point gets (files then need format version 2). */
    public Builder dataBlockHashIndex(boolean hashIndex) {
      this.dataBlockHash = hashIndex;
      return this;
    }

    /** Whether the index is split into partitions of about one block under a top-level index. */
    public Builder partitionedIndex(boolean partitioned) {
      this.partitionedIndex = partitioned;
      return this;
    }

    /** Whether blocks are LZ4-compressed (kept only where that saves at least 1/8). */
    public Builder lz4(boolean lz4) {
      this.lz4 = lz4;
      return this;
    }

    /** Whether the finished file is fsynced. */
    public Builder sync(boolean sync) {
      this.sync = sync;
      return this;
    }

    /**
     * Writes a {@link PrefixFilter} over the first {@code bytes} bytes of each key (0 = none; a
     * filter needs format version 3). Uses the bloom's bits per key, else 10.
     */
    public Builder prefixFilterLength(int bytes) {
      this.prefixLength = bytes;
      return this;
    }

    public TableOptions build() {
      if (blockSize < 1 || restartInterval < 1 || bloomBitsPerKey < 0 || prefixLength < 0) {
        throw new IllegalArgumentException(
            "table options out of range: block size "
                + blockSize
                + ", restart interval "
                + restartInterval
                + ", bloom bits per key "
                + bloomBitsPerKey
                + ", prefix filter length "
                + prefixLength);
      }
      return new TableOptions(this);
    }
  }
}
