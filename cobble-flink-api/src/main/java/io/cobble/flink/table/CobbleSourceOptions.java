package io.cobble.flink.table;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/** Options of the Cobble SQL source. Values are checked by {@link SourceOptionsValidator}. */
public final class CobbleSourceOptions {

  public static final String LATEST = "latest";

  public static final ConfigOption<String> SOURCE_KIND =
      ConfigOptions.key("source.kind")
          .stringType()
          .defaultValue(SourceKind.AUTO.optionValue())
          .withDescription(
              "What the path holds: auto, sink (a Cobble sink table), state (a Flink checkpoint"
                  + " written with the Cobble state backend) or raw (any Cobble table as bytes)."
                  + " auto never selects raw.");

  public static final ConfigOption<String> SCAN_CHECKPOINT_ID =
      ConfigOptions.key("scan.checkpoint-id")
          .stringType()
          .defaultValue(LATEST)
          .withDescription("Snapshot to read: 'latest' or a positive checkpoint id.");

  public static final ConfigOption<String> SCAN_MODE =
      ConfigOptions.key("scan.mode")
          .stringType()
          .defaultValue(ScanMode.BATCH.optionValue())
          .withDescription(
              "batch reads one snapshot; streaming (only with 'latest') keeps following new ones.");

  public static final ConfigOption<Long> SCAN_POLL_INTERVAL_MS =
      ConfigOptions.key("scan.poll-interval-ms")
          .longType()
          .defaultValue(3000L)
          .withDescription("How often streaming mode looks for a new snapshot, in milliseconds.");

  public static final ConfigOption<Long> SCAN_SNAPSHOT_LEASE_MS =
      ConfigOptions.key("scan.snapshot-lease-ms")
          .longType()
          .defaultValue(600_000L)
          .withDescription(
              "How long the snapshots a running source still reads stay protected from the"
                  + " writer's snapshot.retention without being renewed, in milliseconds. The"
                  + " source renews its lease while it runs; a source that stops (or dies) lets"
                  + " it lapse, and the writer then cleans up.");

  public static final ConfigOption<MemorySize> SOURCE_BLOCK_CACHE_MEMORY =
      ConfigOptions.key("source.block-cache-memory")
          .memoryType()
          .defaultValue(MemorySize.ZERO)
          .withDescription(
              "Block cache of one source reader, mainly for lookups. When the table's files fit"
                  + " in seven eighths of it, every data block a lookup reads stays in memory for"
                  + " as long as the reader reads that snapshot, with no eviction and no cache"
                  + " lookup per read; a larger table, and scans, use it as an evicting cache. 0"
                  + " disables it.");

  public static final ConfigOption<MemorySize> SOURCE_ROW_CACHE_MEMORY =
      ConfigOptions.key("source.row-cache-memory")
          .memoryType()
          .defaultValue(MemorySize.ZERO)
          .withDescription(
              "Cache of lookup results of one source reader (a key's projected values, or that"
                  + " it has none), so a key looked up again skips the filter, index and block"
                  + " search; kept as bytes, oldest evicted first; an entry answers only reads"
                  + " of the snapshot it was read from (older ones age out). It pays when a set"
                  + " of hot keys it can hold takes most lookups; lookups spread evenly over many"
                  + " more keys than it holds cost more with it (each miss also fills it). 0"
                  + " disables it.");

  public static final ConfigOption<String> STATE_NAME =
      ConfigOptions.key("state.name")
          .stringType()
          .noDefaultValue()
          .withDescription("State to read when source.kind = 'state'.");

  public static final ConfigOption<String> STATE_OPERATOR_ID =
      ConfigOptions.key("state.operator-id")
          .stringType()
          .noDefaultValue()
          .withDescription("Cobble operator to read when source.kind = 'state'.");

  public static final ConfigOption<String> STATE_KIND =
      ConfigOptions.key("state.kind")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Expected state kind (value, list, map, reducing, aggregating or timer), checked"
                  + " against the checkpoint's metadata.");

  public static final ConfigOption<String> RAW_COLUMNS =
      ConfigOptions.key("raw.columns")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Comma-separated Cobble column indexes to read when source.kind = 'raw', e.g. 0,1.");

  public static final ConfigOption<Boolean> LOOKUP_ASYNC =
      ConfigOptions.key("lookup.async")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "Whether lookup joins read asynchronously: true gives the planner an async lookup"
                  + " function whose point reads run on a pool of lookup.async.max-in-flight"
                  + " threads per subtask; false reads one probe at a time on the task thread.");

  public static final ConfigOption<Integer> LOOKUP_ASYNC_MAX_IN_FLIGHT =
      ConfigOptions.key("lookup.async.max-in-flight")
          .intType()
          .defaultValue(16)
          .withDescription(
              "The most point reads one async lookup subtask runs at once; > 0. Further probes"
                  + " wait, up to Flink's table.exec.async-lookup.buffer-capacity.");

  private CobbleSourceOptions() {}
}
