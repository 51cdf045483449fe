package io.cobble.flink.table.sink;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shard id of a sink writer on the table's snapshot volume: {@code
 * g<generation>-<index>of<count>}. The generation grows whenever the writer count changes, so
 * shards of two layouts never share an id even when a table returns to an earlier writer count, and
 * a global snapshot never mixes up two shards.
 */
final class ShardId {

  private static final Pattern FORMAT = Pattern.compile("g(\\d+)-(\\d+)of(\\d+)");

  private final int generation;
  private final int index;
  private final int count;

  ShardId(int generation, int index, int count) {
    this.generation = generation;
    this.index = index;
    this.count = count;
  }

  /** The id, or empty when {@code id} is not a sink writer's shard id. */
  static Optional<ShardId> tryParse(String id) {
    Matcher m = FORMAT.matcher(id);
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new ShardId(
            Integer.parseInt(m.group(1)),
            Integer.parseInt(m.group(2)),
            Integer.parseInt(m.group(3))));
  }

  static ShardId parse(String id) {
    Optional<ShardId> parsed = tryParse(id);
    if (!parsed.isPresent()) {
      throw new IllegalStateException(
          "Shard '"
              + id
              + "' was not written by the Cobble SQL sink; a sink table's shards are named"
              + " g<generation>-<index>of<count>. Write to a new 'path'.");
    }
    return parsed.get();
  }

  int generation() {
    return generation;
  }

  int index() {
    return index;
  }

  int count() {
    return count;
  }

  @Override
  public String toString() {
    return "g" + generation + "-" + index + "of" + count;
  }
}
