/** Compaction picking (policies), execution and the table/value-log output writer. */
package io.cobble.compaction;
