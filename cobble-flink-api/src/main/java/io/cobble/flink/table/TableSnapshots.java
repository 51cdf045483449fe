package io.cobble.flink.table;

import io.cobble.CobbleException;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import org.apache.flink.table.api.ValidationException;

/**
 * Planning-time checks of the global snapshot a source reads: it must exist (a batch read of {@code
 * latest} needs a {@code global/CURRENT}; a fixed {@code scan.checkpoint-id} needs that snapshot),
 * so a wrong path or id fails when the query is planned, not in a running job. A streaming read may
 * start before the first snapshot and waits for it.
 */
final class TableSnapshots {

  private TableSnapshots() {}

  /** The snapshot a read would start from, or empty for a streaming read of an empty table. */
  static Optional<GlobalSnapshot> check(TableStorage table, long globalId, boolean streaming) {
    try (Storage storage = table.open()) {
      SnapshotStore store = new SnapshotStore(storage);
      if (globalId == 0) {
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
        globalId = current.get();
      }
      Optional<GlobalSnapshot> snapshot = store.readGlobal(globalId);
      if (!snapshot.isPresent()) {
        throw new ValidationException(
            "Option '"
                + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
                + "' is "
                + globalId
                + ", but the Cobble table at '"
                + table.root()
                + "' has no such global snapshot; it has "
                + store.globalIds()
                + " (older ones are expired by the writer's snapshot.retention).");
      }
      return snapshot;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Cobble table at " + table.root(), e);
    }
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
