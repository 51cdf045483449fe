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
      Optional<GlobalSnapshot> current = store.currentGlobal();
      if (!current.isPresent() && !streaming) {
        throw new ValidationException(
            "The Cobble table at '"
                + table.root()
                + "' has no global snapshot yet (no global/CURRENT): nothing to read with "
                + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
                + " = 'latest'. Write the table first, or read it with scan.mode = 'streaming'"
                + " to wait for its first snapshot.");
      }
      return current;
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
