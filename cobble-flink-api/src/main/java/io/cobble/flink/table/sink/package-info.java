/**
 * The Cobble SQL sink: {@link io.cobble.flink.table.sink.CobbleDynamicTableSink} partitions rows by
 * bucket to the writer owning it and writes them through the line's Sink V2 sink (from {@link
 * io.cobble.flink.shim.FlinkLineShim#sink}) with {@link
 * io.cobble.flink.table.sink.CobbleSinkWriter}.
 */
package io.cobble.flink.table.sink;
