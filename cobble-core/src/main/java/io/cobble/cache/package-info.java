/** Block cache shared by all tables of a Db. */
package io.cobble.cache;
