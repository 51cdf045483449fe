/**
 * How a Cobble sink table lies on storage. Readers in any later version depend on every detail
 * here, so each is a format decision, not an implementation detail.
 *
 * <pre>
 * &lt;path&gt;/schema/table-schema    inspect schema ({@link io.cobble.flink.table.layout.TableSchemaFile})
 * &lt;path&gt;/global/CURRENT          the committed global snapshot readers open
 * &lt;path&gt;/global/global-&lt;n&gt;       global snapshots kept by {@code snapshot.retention}
 * &lt;path&gt;/shards/&lt;shard&gt;/         shard snapshot manifests
 * &lt;path&gt;/data/&lt;shard&gt;/           data files of the shard snapshots
 * &lt;path&gt;/leases/&lt;shard&gt;/         files a rescaled shard adopted before its first snapshot
 * </pre>
 *
 * <p>The table root is the engine's snapshot volume ({@link io.cobble.snapshot.SnapshotStore}).
 * Writer i of n owns buckets [i*B/n, (i+1)*B/n) as shard {@code g<generation>-<i>of<n>}; the
 * generation grows when n changes. Writers keep their working Db in the task's local temporary
 * directory; only snapshots reach the table root.
 *
 * <p>A row is stored in the engine's {@code default} family under its bucket and key: the key is
 * the primary key as {@link io.cobble.flink.table.codec.KeyEncoder} encodes it, the bucket is
 * {@link io.cobble.flink.table.layout.BucketRouter} of that key, and Cobble column {@code c} holds
 * the {@code c}-th non-key column as {@link io.cobble.flink.table.codec.RowCodec} encodes it. B is
 * the {@code bucket} option, fixed by the first write, and n the {@code sink.parallelism}.
 */
package io.cobble.flink.table.layout;
