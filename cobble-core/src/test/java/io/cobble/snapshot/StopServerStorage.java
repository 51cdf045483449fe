package io.cobble.snapshot;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Delegates to a real storage and, once armed, runs {@code stop} (stopping the real server behind
 * it) just before the first file creation or publication whose path matches, then lets that call go
 * on against the stopped server.
 */
final class StopServerStorage implements Storage {
  private final Storage delegate;
  private final Runnable stop;
  private volatile Pattern trigger;

  StopServerStorage(Storage delegate, Runnable stop) {
    this.delegate = delegate;
    this.stop = stop;
  }

  /** Stops the server before the next write to a path matching {@code regex}. */
  void arm(String regex) {
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
  public URI uri() {
    return delegate.uri();
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    maybeStop(path);
    return delegate.create(path);
  }

  @Override
  public StorageInput open(String path) throws IOException {
    return delegate.open(path);
  }

  @Override
  public StorageInput open(String path, long length) throws IOException {
    return delegate.open(path, length);
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    return delegate.readAll(path);
  }

  @Override
  public long length(String path) throws IOException {
    return delegate.length(path);
  }

  @Override
  public boolean exists(String path) throws IOException {
    return delegate.exists(path);
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    return delegate.list(prefix);
  }

  @Override
  public void delete(String path) throws IOException {
    delegate.delete(path);
  }

  @Override
  public boolean atomicRename() {
    return delegate.atomicRename();
  }

  @Override
  public void rename(String source, String target) throws IOException {
    delegate.rename(source, target);
  }

  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    maybeStop(path);
    delegate.publishAtomically(path, bytes);
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
