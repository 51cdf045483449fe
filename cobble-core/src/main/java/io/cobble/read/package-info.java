/** The point-read path: gets over one version of memtables and table files. */
package io.cobble.read;
