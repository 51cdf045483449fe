package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.runtime.state.KeyGroupRange;

/**
 * The shard as it was at a savepoint's synchronous phase: one scan cursor per key group and family,
 * all opened at construction. The engine guarantees that a cursor reads the Db as of its opening
 * ({@link Db#scan}): no later put, delete or merge shows in it, with any memtable type, while
 * flushes and compactions run, and the files it reads stay pinned until it is closed. So the rows
 * can be read in the asynchronous phase while the task keeps writing. A family created after the
 * sync point has no cursor: its state is not in the savepoint either.
 *
 * <p>Each cursor is handed out once ({@link #take}) and closed by whoever took it; {@link #close}
 * closes the ones never taken, which releases the pinned memtables and files. The price: key groups
 * times states cursors are open until the writer reaches them, each with its merge sources and the
 * data blocks they stand on, and files a compaction replaced stay on disk until then.
 */
final class CanonicalSavepointView implements AutoCloseable {
  private final int firstKeyGroup;
  private final ScanCursor[][] cursors;
  private boolean closed;

  /** Opens the cursors; {@code families[i]} is the family of the savepoint's state i. */
  CanonicalSavepointView(Db db, KeyGroupRange range, List<String> families) {
    this.firstKeyGroup = range.getStartKeyGroup();
    this.cursors = new ScanCursor[range.getNumberOfKeyGroups()][families.size()];
    Set<String> present = new HashSet<>();
    db.schema().families().forEach(f -> present.add(f.name()));
    try {
      for (int kg = 0; kg < cursors.length; kg++) {
        for (int s = 0; s < families.size(); s++) {
          if (present.contains(families.get(s))) {
            cursors[kg][s] =
                db.scan(firstKeyGroup + kg, families.get(s), null, null, ScanOptions.defaults());
          }
        }
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * The cursor of {@code state} in {@code keyGroup}, now owned by the caller; null when the state
   * had no family at the sync point.
   */
  synchronized ScanCursor take(int keyGroup, int state) {
    if (closed) {
      throw new IllegalStateException("the savepoint's view of the shard was released");
    }
    ScanCursor c = cursors[keyGroup - firstKeyGroup][state];
    cursors[keyGroup - firstKeyGroup][state] = null;
    return c;
  }

  @Override
  public synchronized void close() {
    closed = true;
    for (ScanCursor[] group : cursors) {
      for (int s = 0; s < group.length; s++) {
        if (group[s] != null) {
          group[s].close();
          group[s] = null;
        }
      }
    }
  }
}
