package io.cobble.flink.table;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/** Options of the Cobble SQL sink. */
public final class CobbleSinkOptions {

  public static final ConfigOption<Integer> SINK_PARALLELISM =
      ConfigOptions.key("sink.parallelism")
          .intType()
          .noDefaultValue()
          .withDescription("Number of sink writers; each owns a contiguous range of buckets.");

  public static final ConfigOption<Integer> SNAPSHOT_RETENTION =
      ConfigOptions.key("snapshot.retention")
          .intType()
          .defaultValue(1)
          .withDescription("Number of committed global snapshots kept; older ones expire.");

  public static final ConfigOption<Boolean> SINK_USE_MANAGED_MEMORY_ALLOCATOR =
      ConfigOptions.key("sink.use-managed-memory-allocator")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "Whether each writer declares managed memory usage: the writer then declares an"
                  + " operator-scope managed memory use case weighted by"
                  + " 'sink.writer-buffer-memory' (in MiB), sizes its write buffer to the share of"
                  + " the slot's managed memory Flink gives it, and reserves that share until it"
                  + " closes. The buffer itself stays on the JVM heap. False: the buffer is"
                  + " 'sink.writer-buffer-memory'.");

  public static final ConfigOption<MemorySize> SINK_WRITER_BUFFER_MEMORY =
      ConfigOptions.key("sink.writer-buffer-memory")
          .memoryType()
          .defaultValue(MemorySize.parse("256mb"))
          .withDescription("Write-buffer budget of one sink writer.");

  public static final ConfigOption<Boolean> SINK_COMPACT_AT_END_OF_INPUT =
      ConfigOptions.key("sink.compact-at-end-of-input")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether each writer, when its bounded input ends, merges its shard's level-0 files"
                  + " into level 1 before the final snapshot, so that lookups and reads of a"
                  + " table written once check one file per level. Costs one rewrite of the"
                  + " shard's level-1 data the level-0 files overlap at the end of a bounded"
                  + " job; unbounded jobs never reach it.");

  private CobbleSinkOptions() {}
}
