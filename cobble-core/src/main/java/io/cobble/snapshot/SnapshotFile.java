package io.cobble.snapshot;

import io.cobble.sst.TableProperties;
import io.cobble.util.Bytes;

/**
 * One data file of a shard snapshot: where it sits in the shard (tree, level, file number) and
 * where it lies on the snapshot volume. Value-log files have no tree and no table properties.
 */
public final class SnapshotFile {
  private final boolean vlog;
  private final int family;
  private final int level;
  private final long number;
  private final long size;
  private final long vlogEntries;
  private final TableProperties properties;
  private final String volumePath;

  private SnapshotFile(
      boolean vlog,
      int family,
      int level,
      long number,
      long size,
      long vlogEntries,
      TableProperties properties,
      String volumePath) {
    this.vlog = vlog;
    this.family = family;
    this.level = level;
    this.number = number;
    this.size = size;
    this.vlogEntries = vlogEntries;
    this.properties = properties;
    this.volumePath = volumePath;
  }

  public static SnapshotFile table(
      int family,
      int level,
      long number,
      long size,
      TableProperties properties,
      String volumePath) {
    return new SnapshotFile(false, family, level, number, size, 0, properties, volumePath);
  }

  public static SnapshotFile vlog(long number, long size, long entries, String volumePath) {
    return new SnapshotFile(true, -1, -1, number, size, entries, null, volumePath);
  }

  public boolean isVlog() {
    return vlog;
  }

  public int family() {
    return family;
  }

  public int level() {
    return level;
  }

  public long number() {
    return number;
  }

  public long size() {
    return size;
  }

  public long vlogEntries() {
    return vlogEntries;
  }

  public TableProperties properties() {
    return properties;
  }

  /**
   * The buckets this table's keys span, from the bucket prefix of its smallest and largest key
   * (tables only: a value-log file has no key range).
   */
  public BucketRange bucketSpan() {
    return BucketRange.of(
        Bytes.getShort(properties.smallest(), 0), Bytes.getShort(properties.largest(), 0));
  }

  /** Path relative to the snapshot volume root. */
  public String volumePath() {
    return volumePath;
  }

  /** The name the file has in a Db directory. */
  public String localName() {
    return String.format(vlog ? "%06d.vlog" : "%06d.sst", number);
  }
}
