/**
 * The Cobble SQL sink. {@link io.cobble.flink.table.sink.CobbleSinkProvider} partitions rows by
 * bucket to the writer owning it ({@link io.cobble.flink.table.sink.CobbleSinkWriterOperator}),
 * whose shard snapshots one {@link io.cobble.flink.table.sink.CobbleSinkCommitter} turns into a
 * global snapshot per completed checkpoint; {@link io.cobble.flink.table.sink.ShardStart} holds the
 * restore and rescale rules.
 */
package io.cobble.flink.table.sink;
