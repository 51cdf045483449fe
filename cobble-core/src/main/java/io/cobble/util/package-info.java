/**
 * Byte-level helpers shared by every layer: varint encoding, comparison, CRC, I/O hints, writing a
 * new local file.
 */
package io.cobble.util;
