/** Versions (what readers see), the manifest, and reference-counted file lifetimes. */
package io.cobble.version;
