package io.cobble.snapshot;

import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.util.regex.Pattern;

/**
 * Delegates to a real storage and, once armed, runs {@code stop} (stopping the real server behind
 * it) just before the first file creation or publication whose path matches, then lets that call go
 * on against the stopped server.
 */
public final class StopServerStorage extends ForwardingStorage {
  private final Runnable stop;
  private volatile Pattern trigger;

  public StopServerStorage(Storage delegate, Runnable stop) {
    super(delegate);
    this.stop = stop;
  }

  /** Stops the server before the next write to a path matching {@code regex}. */
  public void arm(String regex) {
    trigger = Pattern.compile(regex);
  }

  private void maybeStop(String path) {
    Pattern t = trigger;
    if (t != null && t.matcher(path).matches()) {
      trigger = null;
      stop.run();
    }
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    maybeStop(path);
    return delegate.create(path);
  }

  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    maybeStop(path);
    delegate.publishAtomically(path, bytes);
  }
}
