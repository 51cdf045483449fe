package io.cobble.storage;

import java.io.IOException;
import java.net.URI;
import java.util.List;

/**
 * Forwards every call to another storage; wrappers override the calls they change or observe. The
 * one call not forwarded is {@link #link}: a wrapper that observes or changes writes would never
 * see a link's bytes, so a wrapper copies unless it forwards links itself.
 */
public abstract class ForwardingStorage implements Storage {
  protected final Storage delegate;

  protected ForwardingStorage(Storage delegate) {
    this.delegate = delegate;
  }

  @Override
  public URI uri() {
    return delegate.uri();
  }

  @Override
  public StorageOutput create(String path) throws IOException {
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
    delegate.publishAtomically(path, bytes);
  }

  @Override
  public boolean createExclusively(String path, byte[] bytes) throws IOException {
    return delegate.createExclusively(path, bytes);
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
