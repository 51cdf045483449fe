package io.cobble.benchmarks.memtable;

import io.cobble.memtable.VecMemTable;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * What memtable arenas cost the heap and the collector: fills {@code rounds} (default 40) memtables
 * of about 64 MB of records each (550,000 rows of a 16-byte key and a 100-byte value, with a little
 * short-lived garbage beside them, as a task thread makes), keeping the last two alive as a writer
 * with one memtable in flush does, then reports the fill time, the collectors' pause counts and
 * times, and the heap still used by the two memtables after a full collection. Run it under the
 * collector and heap to compare, e.g. {@code java -XX:+UseG1GC -Xms3g -Xmx3g -cp
 * benchmarks/target/benchmarks.jar io.cobble.benchmarks.memtable.ArenaHeapMeasurement}.
 */
public final class ArenaHeapMeasurement {
  private static final int ROWS = 550_000;

  private ArenaHeapMeasurement() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
    byte[] key = new byte[16];
    byte[] row = new byte[100];
    VecMemTable[] live = new VecMemTable[2];
    byte[][] recent = new byte[64][];
    long start = System.nanoTime();
    for (int round = 0; round < rounds; round++) {
      VecMemTable table = new VecMemTable(round, (k, older, newer) -> newer);
      for (int i = 0; i < ROWS; i++) {
        key[0] = (byte) i;
        key[1] = (byte) (i >> 8);
        key[2] = (byte) (i >> 16);
        key[3] = (byte) round;
        table.put(key, key.length, row, row.length, true);
        if ((i & 15) == 0) {
          recent[(i >>> 4) & 63] = new byte[256];
        }
      }
      live[round & 1] = table;
    }
    double fillSeconds = (System.nanoTime() - start) / 1e9;
    String pauses = pauses();
    System.gc();
    long usedMb = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
    System.out.printf(
        "fill %.2f s; collections during the fill: %s; heap used after a full collection with two"
            + " memtables (%d rows) alive: %d MB%n",
        fillSeconds, pauses, live[0].entryCount() + live[1].entryCount(), usedMb);
  }

  private static String pauses() {
    StringBuilder out = new StringBuilder();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      out.append(out.length() == 0 ? "" : ", ")
          .append(gc.getName())
          .append(' ')
          .append(gc.getCollectionCount())
          .append(" (")
          .append(gc.getCollectionTime())
          .append(" ms)");
    }
    return out.toString();
  }
}
