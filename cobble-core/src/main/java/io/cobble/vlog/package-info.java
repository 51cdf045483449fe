/** Value log: large values separated from tables at flush, addressed by pointers. */
package io.cobble.vlog;
