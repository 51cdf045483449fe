package io.cobble.benchmarks.flinkstate;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time of the process's threads between two marks, by thread group (a thread's name without a
 * trailing {@code -<number>}, e.g. {@code cobble-flush}, {@code cobble-compaction}, JMH's worker),
 * plus the collectors' time. On a shared machine ops/ms follows the load; CPU seconds per group
 * divided by the operations of the iteration do not, and say which thread a change made cheaper.
 */
final class ThreadCpu {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final Map<Long, Long> cpuAtMark = new HashMap<>();
  private long gcAtMark;
  private long wallAtMark;

  /** Remembers every live thread's CPU time, the collectors' time and the clock. */
  void mark() {
    cpuAtMark.clear();
    for (long id : THREADS.getAllThreadIds()) {
      long cpu = THREADS.getThreadCpuTime(id);
      if (cpu >= 0) {
        cpuAtMark.put(id, cpu);
      }
    }
    gcAtMark = gcMillis();
    wallAtMark = System.nanoTime();
  }

  /**
   * CPU seconds per thread group since {@link #mark} (threads started since count from zero;
   * threads that ended since are missed), e.g. {@code wall=20.0s cobble-compaction=11.2s ...}.
   */
  String sinceMark() {
    Map<String, Long> byGroup = new TreeMap<>();
    for (long id : THREADS.getAllThreadIds()) {
      long cpu = THREADS.getThreadCpuTime(id);
      java.lang.management.ThreadInfo info = THREADS.getThreadInfo(id);
      if (cpu < 0 || info == null) {
        continue;
      }
      long delta = cpu - cpuAtMark.getOrDefault(id, 0L);
      if (delta > 0) {
        byGroup.merge(group(info.getThreadName()), delta, Long::sum);
      }
    }
    StringBuilder text = new StringBuilder();
    text.append(String.format("wall=%.1fs", (System.nanoTime() - wallAtMark) / 1e9));
    long total = 0;
    for (Map.Entry<String, Long> g : byGroup.entrySet()) {
      total += g.getValue();
      if (g.getValue() >= 10_000_000L) {
        text.append(String.format(" %s=%.2fs", g.getKey(), g.getValue() / 1e9));
      }
    }
    text.append(
        String.format(" threads=%.2fs gc=%.2fs", total / 1e9, (gcMillis() - gcAtMark) / 1e3));
    return text.toString();
  }

  /** {@code cobble-compaction-3} and {@code cobble-compaction-4} are one group. */
  private static String group(String name) {
    int end = name.length();
    while (end > 0 && Character.isDigit(name.charAt(end - 1))) {
      end--;
    }
    if (end < name.length() && end > 0 && name.charAt(end - 1) == '-') {
      end--;
    }
    String group = name.substring(0, end);
    // JMH names its worker after the benchmark; one short name keeps the line readable.
    return group.contains("jmh-worker") ? "benchmark" : group.replace(' ', '_');
  }

  private static long gcMillis() {
    long sum = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      sum += Math.max(0, gc.getCollectionTime());
    }
    return sum;
  }
}
