package io.cobble.snapshot;

import java.util.Collections;
import java.util.List;

/**
 * Keeps data files on a snapshot volume alive for a shard that uses them (restored with a new
 * identity, or imported by rescale) until a snapshot of that shard refers to them itself. Without
 * it the source's retention could delete a file the target still reads in place.
 */
public final class ExportLease {
  private final SnapshotStore store;
  private final String path;
  private final List<String> files;

  ExportLease(SnapshotStore store, String path, List<String> files) {
    this.store = store;
    this.path = path;
    this.files = Collections.unmodifiableList(files);
  }

  /** The lease's metadata path on the volume. */
  public String path() {
    return path;
  }

  public List<String> files() {
    return files;
  }

  /** Ends the lease; the files stay as long as some snapshot refers to them. */
  public void release() {
    store.deleteMetadata(path);
  }
}
