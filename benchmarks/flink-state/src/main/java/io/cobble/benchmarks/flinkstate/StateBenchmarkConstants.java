package io.cobble.benchmarks.flinkstate;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** The data of apache/flink-benchmarks' state benchmarks: same counts, same key layout. */
final class StateBenchmarkConstants {
  static final int MAP_KEY_COUNT = 10;
  static final int LIST_VALUE_COUNT = 100;
  static final int SETUP_KEY_COUNT = 500_000;
  static final int NEW_KEY_COUNT = 500_000;
  static final int RANDOM_VALUE_COUNT = 1_000_000;

  static final List<Long> MAP_KEYS = new ArrayList<>(MAP_KEY_COUNT);
  static final List<Double> MAP_VALUES = new ArrayList<>(MAP_KEY_COUNT);
  static final List<Long> SETUP_KEYS = new ArrayList<>(SETUP_KEY_COUNT);
  static final List<Long> NEW_KEYS = new ArrayList<>(NEW_KEY_COUNT);
  static final List<Long> RANDOM_VALUES = new ArrayList<>(RANDOM_VALUE_COUNT);

  static {
    Random random = new Random(42);
    for (int i = 0; i < MAP_KEY_COUNT; i++) {
      MAP_KEYS.add((long) i);
      MAP_VALUES.add(random.nextDouble());
    }
    Collections.shuffle(MAP_KEYS, random);
    for (long i = 0; i < SETUP_KEY_COUNT; i++) {
      SETUP_KEYS.add(i);
    }
    Collections.shuffle(SETUP_KEYS, random);
    for (long i = 0; i < NEW_KEY_COUNT; i++) {
      NEW_KEYS.add(i + SETUP_KEY_COUNT);
    }
    Collections.shuffle(NEW_KEYS, random);
    for (int i = 0; i < RANDOM_VALUE_COUNT; i++) {
      RANDOM_VALUES.add(random.nextLong());
    }
  }

  private StateBenchmarkConstants() {}
}
