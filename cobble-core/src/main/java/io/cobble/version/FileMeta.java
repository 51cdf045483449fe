package io.cobble.version;

import io.cobble.iterator.KvIterator;
import io.cobble.iterator.RunFile;
import io.cobble.sst.Table;
import io.cobble.sst.TableProperties;
import io.cobble.util.Bytes;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A table file as the version set sees it: number, owning tree, size, properties and its open
 * reader. Reference-counted by the versions that contain it; the file is deleted when the last one
 * lets go.
 */
public final class FileMeta implements RunFile {
  private final long number;
  private final int family;
  private final long size;
  private final TableProperties properties;
  private final Table table;
  final AtomicInteger refs = new AtomicInteger();

  public FileMeta(long number, int family, long size, TableProperties properties, Table table) {
    this.number = number;
    this.family = family;
    this.size = size;
    this.properties = properties;
    this.table = table;
  }

  public long number() {
    return number;
  }

  public int family() {
    return family;
  }

  public long size() {
    return size;
  }

  public TableProperties properties() {
    return properties;
  }

  public Table table() {
    return table;
  }

  public byte[] smallest() {
    return properties.smallest();
  }

  @Override
  public byte[] largest() {
    return properties.largest();
  }

  @Override
  public KvIterator iterator(int readAhead) {
    return table.iterator(readAhead);
  }

  @Override
  public KvIterator iterator(int readAhead, KvIterator reuse) {
    return table.iterator(readAhead, reuse);
  }

  public boolean overlaps(byte[] lo, byte[] hi) {
    return Bytes.compare(largest(), lo) >= 0 && Bytes.compare(smallest(), hi) <= 0;
  }

  public boolean contains(byte[] key) {
    return Bytes.compare(smallest(), key) <= 0 && Bytes.compare(largest(), key) >= 0;
  }

  @Override
  public String toString() {
    return String.format("%06d.sst", number);
  }
}
