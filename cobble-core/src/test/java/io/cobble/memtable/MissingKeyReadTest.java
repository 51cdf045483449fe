package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.cobble.MemTableType;
import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A get of a key the memtable does not hold finds nothing while the writer inserts other keys. All
 * keys hash to the same bucket of the hash and vec indexes, so a probe for an absent key runs
 * through every inserted key and ends at the very slot the next insert fills: a reader that loads
 * that slot twice (once to end its probe, once to read the record) gets the row of the key stored
 * in between. That is the "stale read" the engine's ConcurrencyTest once saw on the hash memtable:
 * a key missing from the active memtable read another key's row instead of its own older one.
 *
 * <p>The window is a few instructions wide, so the test makes it frequent: short probe chains (a
 * fresh memtable every {@link #INSERTED} keys) and one reader that does nothing but probe. Without
 * the fix (readers loading the slot twice) hash and adaptive failed within 2.5 s in each of 3 runs
 * on a loaded 2-core machine. Runs {@code cobble.stress.seconds} (default 3) per memtable type.
 */
class MissingKeyReadTest {
  private static final RowCombiner NEWEST = (key, older, newer) -> newer;

  private static final int INSERTED = 300;
  private static final int ABSENT = 64;

  /** Four-byte keys whose hashes agree in their low 12 bits (the first hash table's mask). */
  private static byte[][] collidingKeys(int n) {
    byte[][] keys = new byte[n][];
    int found = 0;
    for (int k = 0; found < n; k++) {
      byte[] key = {'k', (byte) (k >>> 16), (byte) (k >>> 8), (byte) k};
      if ((Bytes.hash(key, 0, key.length) & 0xFFF) == 0) {
        keys[found++] = key;
      }
    }
    return keys;
  }

  private static MemTable create(MemTableType type) {
    switch (type) {
      case SKIPLIST:
        return new SkipListMemTable(1, NEWEST);
      case HASH:
        return new HashMemTable(1, NEWEST);
      case VEC:
        return new VecMemTable(1, NEWEST);
      default:
        return new AdaptiveMemTable(1, NEWEST, MemTableType.HASH);
    }
  }

  private volatile MemTable current;

  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void absentKeysNeverReadAnotherKeysRow(MemTableType type) throws Exception {
    byte[][] keys = collidingKeys(INSERTED + ABSENT);
    long end =
        System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("cobble.stress.seconds", 3));
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean done = new AtomicBoolean();
    current = create(type);
    Thread reader =
        new Thread(
            () -> {
              for (int i = 0; !done.get(); i++) {
                byte[] absent = keys[INSERTED + i % ABSENT];
                byte[] row = current.get(absent, absent.length);
                if (row != null) {
                  throw new AssertionError(
                      "absent key "
                          + Arrays.toString(absent)
                          + " read the row "
                          + Arrays.toString(row));
                }
              }
            });
    reader.setUncaughtExceptionHandler((t, e) -> errors.add(e));
    reader.start();
    long rounds = 0;
    try {
      while (System.nanoTime() < end && errors.isEmpty()) {
        MemTable m = create(type);
        current = m;
        for (int i = 0; i < INSERTED; i++) {
          m.put(keys[i], keys[i].length, keys[i], keys[i].length);
        }
        rounds++;
      }
    } finally {
      done.set(true);
      reader.join(TimeUnit.SECONDS.toMillis(60));
    }
    assertFalse(reader.isAlive(), "reader did not stop within 60 s");
    if (!errors.isEmpty()) {
      throw new AssertionError(
          "wrong row on " + type + " after " + rounds + " memtables", errors.peek());
    }
  }
}
