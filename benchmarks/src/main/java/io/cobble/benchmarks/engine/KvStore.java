package io.cobble.benchmarks.engine;

/** The operations db_bench shapes need, so one benchmark body drives Cobble and RocksDB alike. */
interface KvStore extends AutoCloseable {

  void put(byte[] key, byte[] value);

  byte[] get(byte[] key);

  /** Seeks to {@code start} and reads up to {@code rows} rows; returns the bytes seen. */
  long scan(byte[] start, int rows);

  /** Writes the memtables to files and waits for that, without compacting. */
  void flush();

  /** Writes everything buffered to files and waits for background work to settle. */
  void settle();

  @Override
  void close();
}
