/** Row encoding and the per-column fold rules shared by memtables, compaction and reads. */
package io.cobble.row;
