package io.cobble.flink.table;

import io.cobble.CobbleException;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.table.api.ValidationException;

/**
 * Planning-time checks of the global snapshot a source reads: it must exist (a batch read of {@code
 * latest} needs a {@code global/CURRENT}; a fixed {@code scan.checkpoint-id} needs a retained
 * global snapshot committed for that Flink checkpoint), so a wrong path or id fails when the query
 * is planned, not in a running job. A streaming read may start before the first snapshot and waits
 * for it.
 */
final class TableSnapshots {

  /** Reads of CURRENT and the global snapshot it names while commits keep moving it on. */
  private static final int LATEST_ATTEMPTS = 10;

  private TableSnapshots() {}

  /**
   * The global snapshot a read would start from: {@code CURRENT} for {@code checkpointId} 0 ({@code
   * latest}), else the newest retained global snapshot committed for that Flink checkpoint. Empty
   * for a streaming read of an empty table.
   */
  static Optional<GlobalSnapshot> check(TableStorage table, long checkpointId, boolean streaming) {
    try (Storage storage = table.open()) {
      SnapshotStore store = new SnapshotStore(storage);
      if (checkpointId != 0) {
        return Optional.of(committedFor(store, table, checkpointId));
      }
      for (int attempt = 1; ; attempt++) {
        Optional<Long> current = store.currentGlobalId();
        if (!current.isPresent()) {
          if (streaming) {
            return Optional.empty();
          }
          throw new ValidationException(
              "The Cobble table at '"
                  + table.root()
                  + "' has no global snapshot yet (no global/CURRENT): nothing to read with "
                  + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
                  + " = 'latest'. Write the table first, or read it with scan.mode = 'streaming'"
                  + " to wait for its first snapshot.");
        }
        Optional<GlobalSnapshot> global = store.readGlobal(current.get());
        if (global.isPresent()) {
          return global;
        }
        // A running sink's retention removes a global snapshot once CURRENT has moved past it
        // (with snapshot.retention 1, right after the next commit): read CURRENT again.
        if (attempt == LATEST_ATTEMPTS || store.currentGlobalId().equals(current)) {
          return Optional.of(store.requireGlobal(current.get()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Cobble table at " + table.root(), e);
    }
  }

  /**
   * The newest global snapshot committed for Flink checkpoint {@code checkpointId} (a table written
   * again by a new job may have several), with an error listing the retained checkpoint ids.
   */
  private static GlobalSnapshot committedFor(
      SnapshotStore store, TableStorage table, long checkpointId) {
    Set<Long> available = new TreeSet<>();
    List<Long> ids = store.globalIds();
    GlobalSnapshot found = null;
    for (int i = ids.size() - 1; i >= 0; i--) {
      Optional<GlobalSnapshot> global = store.readGlobal(ids.get(i));
      if (!global.isPresent() || global.get().checkpointId() == GlobalSnapshot.NO_CHECKPOINT) {
        continue;
      }
      available.add(global.get().checkpointId());
      if (found == null && global.get().checkpointId() == checkpointId) {
        found = global.get();
      }
    }
    if (found != null) {
      return found;
    }
    throw new ValidationException(
        "Option '"
            + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
            + "' is "
            + checkpointId
            + ", but the Cobble table at '"
            + table.root()
            + "' has no global snapshot of that checkpoint; its retained checkpoint ids are "
            + available
            + " (older ones are expired by the writer's snapshot.retention). Use one of them or"
            + " 'latest'.");
  }

  /** The number of Cobble columns of the table's rows in {@code snapshot}. */
  static int columnCount(TableStorage table, GlobalSnapshot snapshot) {
    GlobalSnapshot.Part part = snapshot.parts().get(0);
    try (Storage storage = table.open()) {
      return new SnapshotStore(storage)
          .require(part.shardId(), part.snapshotId())
          .schema()
          .requireFamily(TableLayout.FAMILY)
          .columnCount();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Cobble table at " + table.root(), e);
    } catch (CobbleException | IllegalArgumentException e) {
      throw new ValidationException(
          "Cannot read the row layout of the Cobble table at '"
              + table.root()
              + "': "
              + e.getMessage(),
          e);
    }
  }
}
