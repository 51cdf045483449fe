package io.cobble.flink.state;

import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The backend's working directory on the checkpoint storage, plus the files of a restored
 * checkpoint it reads where they lie: each adopted file is served under its engine name ({@link
 * io.cobble.version.RemotePrimary#adoptedPath}) from its own location, read-only. Adopted files are
 * Flink's: never listed, written or deleted through this storage.
 */
final class AdoptingStorage extends ForwardingStorage {

  /** Where an adopted file lies: a storage of its directory and its name there. */
  static final class Location {
    final Storage storage;
    final String name;

    Location(Storage storage, String name) {
      this.storage = storage;
      this.name = name;
    }
  }

  private final Map<String, Location> adopted = new ConcurrentHashMap<>();

  AdoptingStorage(Storage own) {
    super(own);
  }

  /** Serves {@code enginePath} from {@code location} from now on. */
  void adopt(String enginePath, Location location) {
    adopted.put(enginePath, location);
  }

  @Override
  public StorageInput open(String path) throws IOException {
    Location l = adopted.get(path);
    return l == null ? delegate.open(path) : l.storage.open(l.name);
  }

  @Override
  public StorageInput open(String path, long length) throws IOException {
    Location l = adopted.get(path);
    return l == null ? delegate.open(path, length) : l.storage.open(l.name, length);
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    Location l = adopted.get(path);
    return l == null ? delegate.readAll(path) : l.storage.readAll(l.name);
  }

  @Override
  public long length(String path) throws IOException {
    Location l = adopted.get(path);
    return l == null ? delegate.length(path) : l.storage.length(l.name);
  }

  @Override
  public boolean exists(String path) throws IOException {
    Location l = adopted.get(path);
    return l == null ? delegate.exists(path) : l.storage.exists(l.name);
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    refuseAdopted(path);
    return delegate.create(path);
  }

  @Override
  public void delete(String path) throws IOException {
    refuseAdopted(path);
    delegate.delete(path);
  }

  @Override
  public void deleteAll(Collection<String> paths) throws IOException {
    for (String p : paths) {
      refuseAdopted(p);
    }
    delegate.deleteAll(paths);
  }

  @Override
  public void close() throws IOException {
    Set<Storage> sources = Collections.newSetFromMap(new IdentityHashMap<>());
    adopted.values().forEach(l -> sources.add(l.storage));
    try {
      delegate.close();
    } finally {
      for (Storage s : sources) {
        try {
          s.close();
        } catch (IOException | RuntimeException e) {
          // Read-only views of Flink's files: nothing is lost.
        }
      }
    }
  }

  private void refuseAdopted(String path) throws IOException {
    if (adopted.containsKey(path)) {
      throw new IOException(
          path
              + " is a file of the restored checkpoint, owned by Flink; the backend only reads it");
    }
  }
}
