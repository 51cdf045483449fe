/** Merge operators (associative column combiners) and their resolution by name. */
package io.cobble.merge;
