/**
 * The binary forms of Flink SQL rows in a Cobble table: {@link
 * io.cobble.flink.table.codec.KeyEncoder} for primary keys (hashed into buckets and rebuilt by
 * lookups) and {@link io.cobble.flink.table.codec.RowCodec} for value columns. Both are stable
 * formats: tables written by one version are read by every later one.
 */
package io.cobble.flink.table.codec;
