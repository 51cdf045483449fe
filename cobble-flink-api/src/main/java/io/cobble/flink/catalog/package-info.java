/**
 * The Cobble catalog ({@code 'type' = 'cobble'}): databases and typed tables under a warehouse path
 * and storage id, in versioned, checksummed metadata changed with optimistic concurrency, whose
 * tables are written and read by the Cobble SQL sink and source.
 */
package io.cobble.flink.catalog;
