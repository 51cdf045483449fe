/**
 * How a Cobble sink table lies on storage. Readers in any later version depend on every detail
 * here, so each is a format decision, not an implementation detail.
 *
 * <pre>
 * &lt;path&gt;/schema/table-schema    inspect schema ({@link io.cobble.flink.table.layout.TableSchemaFile})
 * &lt;path&gt;/shard-&lt;i&gt;/             Cobble Db of writer i, owning buckets [i*B/n, (i+1)*B/n)
 * </pre>
 *
 * <p>A row is stored in the engine's {@code default} family under its bucket and key: the key is
 * the primary key as {@link io.cobble.flink.table.codec.KeyEncoder} encodes it, the bucket is
 * {@link io.cobble.flink.table.layout.BucketRouter} of that key, and Cobble column {@code c} holds
 * the {@code c}-th non-key column as {@link io.cobble.flink.table.codec.RowCodec} encodes it. B is
 * the {@code bucket} option and n the {@code sink.parallelism}; both are fixed by the first write.
 */
package io.cobble.flink.table.layout;
