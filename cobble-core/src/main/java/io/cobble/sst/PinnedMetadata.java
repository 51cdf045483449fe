package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockRefs;
import io.cobble.util.ByteReader;
import java.util.function.IntFunction;

/**
 * The metadata a table keeps outside the block cache ({@code sst.pinned-metadata.*}): the top-level
 * index and, when partitions are pinned (or there is a single one), every index and filter
 * partition; index blocks both as blocks (for iterators) and decoded for point reads ({@code
 * sst.read-metadata-cache.mode}). Loaded at open, or on first use when lazy; thread-safe.
 */
final class PinnedMetadata {
  /** Reads and verifies one block of the table, bypassing the block cache. */
  interface BlockReader {
    byte[] read(BlockHandle handle, String kind);
  }

  /** The loaded metadata; immutable. */
  static final class Blocks {
    final Block top;
    final DecodedIndex topDecoded;
    // Null when partitions are not pinned.
    final byte[][] index;
    final DecodedIndex[] indexDecoded;
    // Null without bloom filters or when partitions are not pinned.
    final byte[][] filter;
    // Each filter's trailer byte (BloomFilter.trailerOf), so a probe skips its cold last line.
    final int[] filterTrailer;
    // The table-wide ordinal of each index partition's first data block; null when partitions
    // are not pinned.
    final int[] firstBlock;
    // Null unless the table keeps its data blocks and partitions are pinned.
    final ResidentBlocks resident;
    // Null unless the table reads its data blocks through a block cache and partitions are pinned.
    final BlockRefs refs;
    // Null unless resident or refs is set: where each data block's restarts lie.
    final RestartHints hints;

    Blocks(
        Block top,
        byte[][] index,
        byte[][] filter,
        IntFunction<ResidentBlocks> residentBlocks,
        IntFunction<BlockRefs> blockRefs) {
      this.top = top;
      this.topDecoded = DecodedIndex.top(top);
      this.index = index;
      this.filter = filter;
      if (filter == null) {
        filterTrailer = null;
      } else {
        filterTrailer = new int[filter.length];
        for (int i = 0; i < filter.length; i++) {
          filterTrailer[i] = BloomFilter.trailerOf(filter[i]);
        }
      }
      if (index == null) {
        indexDecoded = null;
        firstBlock = null;
        resident = null;
        refs = null;
        hints = null;
      } else {
        indexDecoded = new DecodedIndex[index.length];
        firstBlock = new int[index.length];
        int blocks = 0;
        for (int i = 0; i < index.length; i++) {
          indexDecoded[i] = DecodedIndex.partition(new Block(index[i]));
          firstBlock[i] = blocks;
          blocks += indexDecoded[i].count();
        }
        resident = residentBlocks == null ? null : residentBlocks.apply(blocks);
        refs = blockRefs == null ? null : blockRefs.apply(blocks);
        hints = resident != null || refs != null ? new RestartHints(blocks) : null;
      }
    }
  }

  private final String name;
  private final Footer footer;
  private final boolean bloom;
  private final TableReadOptions options;
  private final BlockReader reader;
  private final IntFunction<ResidentBlocks> residentBlocks;
  private final IntFunction<BlockRefs> blockRefs;
  private volatile Blocks blocks;

  /**
   * Loads the metadata now, through {@code atOpen}, unless {@code options} keeps none or defers it
   * to first use, which reads through {@code reader}.
   *
   * @param residentBlocks makes the slots of a table that keeps its data blocks, from the block
   *     count, once partitions are loaded; null for a table that does not
   * @param blockRefs likewise makes the references to the data blocks a block cache holds for the
   *     table; null for a table read without a cache or with resident blocks
   */
  PinnedMetadata(
      String name,
      Footer footer,
      boolean bloom,
      TableReadOptions options,
      BlockReader reader,
      BlockReader atOpen,
      IntFunction<ResidentBlocks> residentBlocks,
      IntFunction<BlockRefs> blockRefs) {
    this.name = name;
    this.footer = footer;
    this.bloom = bloom;
    this.options = options;
    this.reader = reader;
    this.residentBlocks = residentBlocks;
    this.blockRefs = blockRefs;
    if (options.pinTopIndex() && !options.lazyMetadata()) {
      blocks = load(atOpen);
    }
  }

  /** The kept metadata when it is loaded, without loading it; null otherwise. */
  Blocks loaded() {
    return blocks;
  }

  /** The kept metadata, loading it on first use when lazy; null when nothing is kept. */
  Blocks get() {
    Blocks b = blocks;
    if (b != null || !options.pinTopIndex()) {
      return b;
    }
    synchronized (this) {
      b = blocks;
      if (b == null) {
        try {
          b = load(reader);
        } catch (CobbleException e) {
          throw e;
        } catch (RuntimeException e) {
          throw new CorruptionException(name, "cannot decode table metadata: " + e, e);
        }
        blocks = b;
      }
      return b;
    }
  }

  private Blocks load(BlockReader from) {
    Block top = new Block(from.read(footer.topIndex(), "top-level index"));
    int parts = countEntries(top);
    if (!options.pinPartitions() && parts != 1) {
      return new Blocks(top, null, null, null, null);
    }
    byte[][] index = new byte[parts][];
    byte[][] filter = bloom ? new byte[parts][] : null;
    BlockIterator it = top.iterator();
    int i = 0;
    for (it.seekToFirst(); it.valid(); it.next()) {
      ByteReader r = new ByteReader(it.value());
      r.readVarInt();
      index[i] = from.read(BlockHandle.decode(r), "index partition");
      if (bloom) {
        filter[i] = from.read(BlockHandle.decode(r), "filter partition");
      }
      i++;
    }
    return new Blocks(top, index, filter, residentBlocks, blockRefs);
  }

  private static int countEntries(Block b) {
    int n = 0;
    BlockIterator it = b.iterator();
    for (it.seekToFirst(); it.valid(); it.next()) {
      n++;
    }
    return n;
  }
}
