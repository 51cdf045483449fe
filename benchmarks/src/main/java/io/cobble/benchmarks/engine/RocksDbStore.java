package io.cobble.benchmarks.engine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * RocksDB configured like the Cobble side: no WAL, same memtable, bloom, block size and cache; L0
 * plain and LZ4 below it (with dynamic level sizes RocksDB keeps its data in the last level).
 */
final class RocksDbStore implements KvStore {

  static {
    RocksDB.loadLibrary();
  }

  private final LRUCache cache;
  private final Options options;
  private final WriteOptions writeOptions;
  private final ReadOptions readOptions;
  private final RocksDB db;

  RocksDbStore(Path dir, StoreSettings settings) {
    cache = new LRUCache(settings.blockCacheBytes);
    BlockBasedTableConfig table =
        new BlockBasedTableConfig()
            .setBlockSize(settings.blockSize)
            .setBlockCache(cache)
            .setFilterPolicy(new BloomFilter(settings.bloomBitsPerKey, false));
    options =
        new Options()
            .setCreateIfMissing(true)
            .setWriteBufferSize(settings.memtableBytes)
            .setMaxWriteBufferNumber(settings.memtableBuffers)
            .setLevel0FileNumCompactionTrigger(settings.l0FileLimit)
            .setMaxBackgroundJobs(settings.backgroundThreads)
            .setTableFormatConfig(table)
            .setCompressionPerLevel(lz4BelowLevel0(7));
    writeOptions = new WriteOptions().setDisableWAL(true);
    readOptions = new ReadOptions();
    try {
      db = RocksDB.open(options, dir.toString());
    } catch (RocksDBException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<CompressionType> lz4BelowLevel0(int levels) {
    List<CompressionType> perLevel = new ArrayList<>();
    perLevel.add(CompressionType.NO_COMPRESSION);
    for (int i = 1; i < levels; i++) {
      perLevel.add(CompressionType.LZ4_COMPRESSION);
    }
    return perLevel;
  }

  @Override
  public void put(byte[] key, byte[] value) {
    try {
      db.put(writeOptions, key, value);
    } catch (RocksDBException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public byte[] get(byte[] key) {
    try {
      return db.get(readOptions, key);
    } catch (RocksDBException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public long scan(byte[] start, int rows) {
    long bytes = 0;
    try (RocksIterator it = db.newIterator(readOptions)) {
      it.seek(start);
      for (int i = 0; i < rows && it.isValid(); i++, it.next()) {
        bytes += it.key().length + it.value().length;
      }
    }
    return bytes;
  }

  @Override
  public void flush() {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    } catch (RocksDBException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void settle() {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
      db.compactRange();
    } catch (RocksDBException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    db.close();
    readOptions.close();
    writeOptions.close();
    options.close();
    cache.close();
  }
}
