package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * What the state-backend MiniCluster ITs share: their key selector and max aggregate, the check of
 * each key's reported state, and the removal of the checkpoints they leave behind.
 */
final class StateJobs {

  private StateJobs() {}

  /**
   * Removes everything under {@code dir}. Flink discards subsumed and claimed checkpoint files
   * asynchronously, also after a job ended, so files that vanish meanwhile are tolerated; the
   * temporary directory's own cleanup fails on such a file.
   */
  static void removeContents(Path dir) throws InterruptedException, IOException {
    for (int attempt = 1; ; attempt++) {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder())
            .filter(path -> !path.equals(dir))
            .forEach(
                path -> {
                  try {
                    Files.deleteIfExists(path);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                });
        return;
      } catch (UncheckedIOException e) {
        if (attempt == 50) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  /** Every expected key reported, each with exactly its expected values, and no other key. */
  static void assertResults(Map<Long, long[]> actual, Map<Long, long[]> expected) {
    assertThat(actual.keySet())
        .as("keys whose event-time timer fired")
        .isEqualTo(expected.keySet());
    for (Map.Entry<Long, long[]> e : expected.entrySet()) {
      assertThat(actual.get(e.getKey())).as("key " + e.getKey()).containsExactly(e.getValue());
    }
  }

  /** Keys a number by its residue modulo the key count. */
  static final class ByKey implements KeySelector<Long, Long> {
    private final int keys;

    ByKey(int keys) {
      this.keys = keys;
    }

    @Override
    public Long getKey(Long value) {
      return value % keys;
    }
  }

  static final class Max implements AggregateFunction<Long, Long, Long> {
    @Override
    public Long createAccumulator() {
      return Long.MIN_VALUE;
    }

    @Override
    public Long add(Long value, Long acc) {
      return Math.max(value, acc);
    }

    @Override
    public Long getResult(Long acc) {
      return acc;
    }

    @Override
    public Long merge(Long a, Long b) {
      return Math.max(a, b);
    }
  }
}
