/** Versioned schema: column families, columns with stable ids, operators and defaults. */
package io.cobble.schema;
