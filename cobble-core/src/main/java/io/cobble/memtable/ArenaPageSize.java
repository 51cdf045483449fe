package io.cobble.memtable;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * The size of an arena's full-grown pages, chosen for the running JVM's collector. Pages live as
 * long as their memtable, so under G1 they should neither be copied from one young space to the
 * next nor waste heap: a page of about one G1 region (up to 4 MiB regions) is a humongous object
 * that fills exactly one region, is never copied, and is freed at the first young collection after
 * its memtable is dropped. The fixed 1-MiB page this replaces, with its array header, took two
 * 1-MiB regions or half a 2-MiB one. Larger regions (heaps of 16 GB and more by G1's default) keep
 * pages below 4 MiB, so memtable slack and the offsets {@link RecordRef} carries stay bounded.
 */
final class ArenaPageSize {
  static final int DEFAULT = 1 << 20;
  static final int LARGEST_REGION_FILLED = 4 << 20;

  /** Room for a byte array's header (16 bytes, 24 without compressed class pointers). */
  static final int ARRAY_HEADER_ROOM = 64;

  private ArenaPageSize() {}

  /** The page size under the given collector and G1 region size (ignored without G1). */
  static int of(boolean g1, long regionBytes) {
    if (!g1 || regionBytes < DEFAULT || Long.bitCount(regionBytes) != 1) {
      return DEFAULT;
    }
    return (int) Math.min(regionBytes, LARGEST_REGION_FILLED) - ARRAY_HEADER_ROOM;
  }

  /** The page size for this JVM; the default when its collector cannot be read. */
  static int ofThisJvm() {
    try {
      HotSpotDiagnosticMXBean vm =
          ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      boolean g1 = Boolean.parseBoolean(vm.getVMOption("UseG1GC").getValue());
      return of(g1, g1 ? Long.parseLong(vm.getVMOption("G1HeapRegionSize").getValue()) : 0);
    } catch (RuntimeException | LinkageError e) {
      return DEFAULT;
    }
  }
}
