/**
 * The Cobble SQL source (FLIP-27) and lookup function over tables laid out as {@link
 * io.cobble.flink.table.layout} describes, read only through {@link io.cobble.reader.Reader}.
 *
 * <h2>Splits and state</h2>
 *
 * A global snapshot is cut into one split per shard snapshot and bucket range ({@link
 * io.cobble.reader.Reader#splits}). A split carries its resume position, {@code (bucket, key)} of
 * the last row emitted; a reader checkpoints the split in progress at that position and its queued
 * splits unchanged, so a restored reader continues exactly after the last emitted row. The
 * enumerator checkpoints the newest global snapshot it has cut, that snapshot's splits (the base of
 * the next diff), the splits not yet assigned, and the pin owner with the splits readers may still
 * read. Both serializers are versioned (splits: 1, enumerator: 2, which still reads 1) and frame
 * their bytes with a magic number and a CRC32.
 *
 * <h2>Streaming: what "changed" means</h2>
 *
 * In {@code scan.mode = 'streaming'} the source first emits every row of the global snapshot that
 * {@code global/CURRENT} names at start. Then, every {@code scan.poll-interval-ms}, if {@code
 * CURRENT} names a newer snapshot N (snapshots published between two polls are folded into one
 * step), it emits, for every bucket, the rows of N whose key is absent from the previous snapshot
 * it read (P) or whose column values differ from P's, as INSERT rows. Rows deleted between P and N
 * are not emitted; a row rewritten with identical values is not emitted. Ranges whose shard
 * snapshot is the same in P and N, or consists of exactly the same files, are skipped without
 * reading. Elsewhere only the keys of the table files N has and P has not are candidates, each
 * looked up in both (see {@link io.cobble.flink.table.source.ChangedRows}), so a step costs about
 * what was written since P, not the table.
 *
 * <h2>Pins</h2>
 *
 * The enumerator pins, on the table root ({@code global-pins/<owner>}), P and every global snapshot
 * a split not yet finished reads, so the sink's {@code snapshot.retention} (even 1) never removes
 * them. The pin is a lease ({@code scan.snapshot-lease-ms}, default 10 minutes) renewed while the
 * source runs; a cancelled or failed job lets it lapse and the sink's next commit cleans up. A
 * finished split's snapshots are let go once a checkpoint taken after it finished completes (at
 * once without checkpoints). Only a job stopped for longer than the lease can find P expired: then
 * the source emits every row of the affected range of N instead (a superset of the changes) and
 * logs a warning.
 *
 * <p>Every split of a bucket range goes to the same reader ({@code firstBucket * parallelism /
 * buckets}) and a reader works through its splits in assignment order, so the changes of one key
 * reach the job in snapshot order.
 *
 * <h2>Lookups</h2>
 *
 * Exact primary-key point reads ({@link io.cobble.reader.Reader#get}) through one reader per table
 * and JVM (one block cache, sized by {@code source.block-cache-memory}); bloom filters keep misses
 * from reading data blocks. With {@code scan.checkpoint-id = 'latest'} the reader moves to a new
 * global snapshot at most once per {@code scan.poll-interval-ms}, checked on lookup.
 */
package io.cobble.flink.table.source;
