package io.cobble.benchmarks.engine;

import io.cobble.Config;
import io.cobble.SingleDb;
import java.nio.file.Path;
import java.util.Map;

/** Cobble with the same settings as {@link RocksDbStore}. */
final class CobbleStore implements KvStore {

  private final SingleDb db;

  CobbleStore(Path dir, StoreSettings settings, String extraOptions) {
    Config.Builder config =
        Config.builder()
            .set("memtable.capacity", settings.memtableBytes)
            .set("memory.memtable-buffer-count", settings.memtableBuffers)
            .set("sst.block-size", settings.blockSize)
            .set("sst.bloom-filter.bits-per-key", settings.bloomBitsPerKey)
            .set("block-cache.size", settings.blockCacheBytes)
            .set("compaction.l0-file-limit", settings.l0FileLimit)
            .set("compaction.threads", settings.backgroundThreads)
            .set("sst.compression", "none,lz4");
    for (String entry : extraOptions.split(";")) {
      if (!entry.isBlank()) {
        int eq = entry.indexOf('=');
        if (eq < 0) {
          throw new IllegalArgumentException(
              "invalid Cobble option '" + entry + "': expected key=value");
        }
        config.set(entry.substring(0, eq).trim(), entry.substring(eq + 1).trim());
      }
    }
    db = SingleDb.open(dir, config.build());
  }

  @Override
  public void put(byte[] key, byte[] value) {
    db.put(key, value);
  }

  @Override
  public byte[] get(byte[] key) {
    return db.get(key);
  }

  @Override
  public long scan(byte[] start, int rows) {
    long bytes = 0;
    try (SingleDb.Cursor cursor = db.scan(start, null)) {
      for (int i = 0; i < rows && cursor.hasNext(); i++) {
        Map.Entry<byte[], byte[]> row = cursor.next();
        bytes += row.getKey().length + row.getValue().length;
      }
    }
    return bytes;
  }

  @Override
  public void flush() {
    db.flush();
  }

  @Override
  public void settle() {
    db.flush();
    db.db().compactAll();
    db.db().waitForCompactions();
  }

  @Override
  public void close() {
    db.close();
  }
}
