package io.cobble.examples;

import io.cobble.CobbleVersion;

/**
 * The embedded quickstart: datagen into a Cobble table, a batch read and a lookup join on a local
 * MiniCluster. The SQL sink and source it needs are not in this release yet, so it says so.
 */
public final class Quickstart {

  private Quickstart() {}

  public static void main(String[] args) {
    System.out.println(
        "Cobble "
            + CobbleVersion.get()
            + ": the quickstart (datagen -> Cobble sink -> batch read -> lookup join on a"
            + " MiniCluster) is not yet available; it arrives with the Flink SQL sink and source.");
  }
}
