package io.cobble.snapshot;

import java.util.concurrent.CompletableFuture;

/**
 * A snapshot that has an id but may not be published yet. {@link #published()} completes with the
 * manifest once it is on the snapshot volume, or exceptionally if the flush of its data or the
 * upload failed or the snapshot was cancelled.
 */
public final class PendingSnapshot {
  private final long id;
  private final CompletableFuture<ShardSnapshot> published = new CompletableFuture<>();
  volatile boolean cancelled;

  PendingSnapshot(long id) {
    this.id = id;
  }

  public long id() {
    return id;
  }

  public CompletableFuture<ShardSnapshot> published() {
    return published;
  }

  CompletableFuture<ShardSnapshot> future() {
    return published;
  }
}
