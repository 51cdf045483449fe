/** Sorted cursors and the merging iterator that folds rows of several sources. */
package io.cobble.iterator;
