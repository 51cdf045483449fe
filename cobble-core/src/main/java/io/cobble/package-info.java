/**
 * Cobble engine API: {@link io.cobble.Db} (one shard: bucket ranges × column families, each family
 * an LSM tree), {@link io.cobble.SingleDb} (one bucket, one column), {@link io.cobble.Config},
 * {@link io.cobble.WriteBatch}, reads with {@link io.cobble.ReadOptions} and scans with {@link
 * io.cobble.ScanOptions}/{@link io.cobble.ScanCursor}, and {@link io.cobble.DbMetrics}.
 *
 * <p>Write path: writes fold into the active memtable (one per Db, keys prefixed by family and
 * bucket); a full memtable is sealed and flushed to one L0 table per family; compaction moves data
 * down the levels. Read path: memtables newest first, then L0 newest first, then one file per
 * deeper level, folding each level's row under the newer ones until every requested column is
 * decided.
 */
package io.cobble;
