package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEY_COUNT;

import java.io.File;
import java.nio.file.Files;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Quick proof that {@link AsyncStateBenchmark}'s set-up runs and reads what it wrote, on every
 * backend: pre-loads {@code -Dbench.check.keys} keys (default 20,000) of value and map state
 * through the benchmark's own loaders, reads each one back in batches and compares it with the
 * loaded data, then updates every key in batches and reads the new values. Exits 1 on the first
 * wrong value, and halts the JVM if a drain does not return within {@code -Dbench.check.timeout-s}
 * (default 600).
 *
 * <pre>
 * java -cp benchmarks/flink-state/target/benchmarks-flink-state-2.0.jar \
 *     io.cobble.benchmarks.flinkstate.AsyncStateBenchmarkCheck [FORST COBBLE_ASYNC COBBLE_SYNC]
 * </pre>
 */
public final class AsyncStateBenchmarkCheck {

  public static void main(String[] args) throws Exception {
    int keys = Integer.getInteger("bench.check.keys", 20_000);
    long timeoutS = Long.getLong("bench.check.timeout-s", 600);
    startWatchdog(timeoutS);
    File parent =
        new File(System.getProperty("bench.state.dir", System.getProperty("java.io.tmpdir")));
    Files.createDirectories(parent.toPath());
    String[] types = args.length > 0 ? args : names(KeyedStateDriver.Type.values());
    for (String name : types) {
      KeyedStateDriver.Type type = KeyedStateDriver.Type.valueOf(name);
      long start = System.nanoTime();
      try (KeyedStateDriver driver = KeyedStateDriver.create(type, parent)) {
        check(type, driver, keys);
      }
      System.out.printf(
          "%s: OK, %d keys loaded, read back, updated and read again (%d ms)%n",
          type, keys, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }
    System.exit(0);
  }

  private static void check(KeyedStateDriver.Type type, KeyedStateDriver driver, int keys) {
    AsyncStateBenchmark.preloadValue(driver, keys);
    AsyncStateBenchmark.preloadMap(driver, keys);
    Random values = new Random(1);
    Random doubles = new Random(4);
    for (int i = 0; i < keys; i++) {
      driver.valueGet((long) i);
      driver.drain();
      expect(type, "valueGet", i, values.nextLong(), driver.lastRead());
      Double[] row = new Double[MAP_KEY_COUNT];
      for (int j = 0; j < MAP_KEY_COUNT; j++) {
        row[j] = doubles.nextDouble();
      }
      int j = i % MAP_KEY_COUNT;
      driver.mapGet((long) i, MAP_KEYS.get(j));
      driver.drain();
      expect(type, "mapGet", i, row[j], driver.lastRead());
    }
    for (int i = 0; i < keys; i++) {
      driver.valueUpdate((long) i, (long) -i);
      driver.mapUpdate((long) i, MAP_KEYS.get(0), (double) -i);
      if (i % AsyncStateBenchmark.BATCH == AsyncStateBenchmark.BATCH - 1) {
        driver.drain();
      }
    }
    driver.drain();
    for (int i = 0; i < keys; i++) {
      driver.valueGet((long) i);
      driver.drain();
      expect(type, "valueGet after valueUpdate", i, (long) -i, driver.lastRead());
      driver.mapGet((long) i, MAP_KEYS.get(0));
      driver.drain();
      expect(type, "mapGet after mapUpdate", i, (double) -i, driver.lastRead());
    }
  }

  private static void expect(
      KeyedStateDriver.Type type, String shape, int key, Object expected, Object actual) {
    if (!Objects.equals(expected, actual)) {
      System.err.printf(
          "%s: %s of key %d returned %s, expected %s%n", type, shape, key, actual, expected);
      System.exit(1);
    }
  }

  private static String[] names(KeyedStateDriver.Type[] types) {
    String[] names = new String[types.length];
    for (int i = 0; i < types.length; i++) {
      names[i] = types[i].name();
    }
    return names;
  }

  private static void startWatchdog(long timeoutS) {
    Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(timeoutS));
              } catch (InterruptedException e) {
                return;
              }
              System.err.printf("no result within %d s: a drain hangs%n", timeoutS);
              Runtime.getRuntime().halt(2);
            },
            "check-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }
}
