/**
 * Table files: prefix-compressed blocks with restart points, partitioned index and bloom filters,
 * per-block CRC32C and optional LZ4, and a fixed footer.
 */
package io.cobble.sst;
