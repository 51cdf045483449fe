/**
 * Where Cobble's files live.
 *
 * <p>{@link io.cobble.storage.Storage} is the engine's whole view of a file system or object store
 * under one base URI. {@link io.cobble.storage.StorageProviders} picks the {@link
 * io.cobble.storage.StorageProvider} for the URI scheme through {@link java.util.ServiceLoader};
 * built in are {@code file} ({@link io.cobble.storage.file.FileStorageProvider}) and {@code s3}
 * ({@link io.cobble.storage.s3.S3StorageProvider}). Further providers (a Flink {@code FileSystem}
 * delegate, a Hadoop one) are jars with a service entry. Provider settings arrive unchanged as
 * {@link io.cobble.storage.StorageOptions}; each provider rejects keys it does not know.
 *
 * <p>{@link io.cobble.storage.DataFile} says where an immutable data file lies: a local path (read
 * with positional reads on a file channel) or a path on a storage (read in place with ranged
 * reads), so restores and readers use snapshot files where they lie on any provider.
 *
 * <p>{@link io.cobble.storage.MetadataFile} checksums and atomically publishes metadata. {@link
 * io.cobble.storage.VolumeSet} says which {@link io.cobble.storage.Volume} serves which {@link
 * io.cobble.storage.VolumeKind}.
 */
package io.cobble.storage;
