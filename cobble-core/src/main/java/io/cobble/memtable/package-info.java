/** Arena-backed memtables: skiplist, hash, vec and the adaptive type that picks among them. */
package io.cobble.memtable;
