package io.cobble;

import io.cobble.util.EnumOption;

/** When the files a flush or compaction writes are fsynced, selected with {@code fsync.policy}. */
public enum FsyncPolicy {
  /** Before each table, value log and manifest is published: a reopen after any crash finds it. */
  PUBLISH,
  /**
   * Only when {@link Db#makeDurable} asks for a file. For a shard whose durable copy is a snapshot
   * (a state backend's checkpoint) rather than its working directory: flushes and compactions skip
   * their fsyncs, and a snapshot fsyncs just the files it hands over in place, once each.
   */
  SNAPSHOT;

  public static FsyncPolicy parse(String key, String text) {
    return EnumOption.parse(FsyncPolicy.class, key, text);
  }
}
