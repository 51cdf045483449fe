/** Byte-level helpers shared by every layer: varint encoding, comparison, CRC, I/O hints. */
package io.cobble.util;
