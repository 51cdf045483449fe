/**
 * Caches: the in-memory block cache shared by all tables of a Db, and the on-disk cache of a remote
 * primary volume's files on the local CACHE volume.
 */
package io.cobble.cache;
