package io.cobble.version;

import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Optional;
import java.util.UUID;

/**
 * The single-writer lease on a remote primary volume: one {@code LEASE} object (checksummed
 * metadata envelope) naming an epoch and an owner token. Opening a writer takes the lease over with
 * a higher epoch; the writer checks it still holds the lease before every manifest publication and
 * every deletion, so a writer that another one replaced fails instead of overwriting the newer
 * writer's state (fencing). Object names carry the epoch too, so the two never write the same
 * object.
 */
public final class WriterLease {
  public static final String PATH = "LEASE";

  private final Storage storage;
  private final long epoch;
  private final String owner;

  private WriterLease(Storage storage, long epoch, String owner) {
    this.storage = storage;
    this.epoch = epoch;
    this.owner = owner;
  }

  /** Takes the lease over with an epoch above the current one and above {@code floor}. */
  public static WriterLease acquire(Storage storage, long floor) throws IOException {
    long current = read(storage).map(h -> h.epoch).orElse(0L);
    long epoch = Math.max(current, floor) + 1;
    String owner = "pid-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();
    ByteWriter w = new ByteWriter(64);
    w.writeVarLong(epoch);
    w.writeString(owner);
    storage.publishAtomically(PATH, MetadataFile.encode(w.toByteArray()));
    WriterLease lease = new WriterLease(storage, epoch, owner);
    // Two writers opening at once: the one whose lease landed last wins, the other fails here.
    lease.check();
    return lease;
  }

  public long epoch() {
    return epoch;
  }

  /**
   * Fails unless this writer still holds the lease.
   *
   * @throws WriterFencedException naming the volume and the newer holder when another writer took
   *     over
   */
  public void check() throws IOException {
    Optional<Holder> holder = read(storage);
    if (holder.isPresent() && holder.get().epoch == epoch && holder.get().owner.equals(owner)) {
      return;
    }
    throw new WriterFencedException(
        "another writer opened "
            + storage.uri()
            + " after this one"
            + holder.map(h -> " (lease epoch " + h.epoch + ", owner " + h.owner + ")").orElse("")
            + "; this writer (epoch "
            + epoch
            + ") is fenced off and publishes nothing more. Close it; only the newest writer may"
            + " change the Db");
  }

  private static final class Holder {
    final long epoch;
    final String owner;

    Holder(long epoch, String owner) {
      this.epoch = epoch;
      this.owner = owner;
    }
  }

  /** The current holder; a missing or damaged lease object reads as none. */
  private static Optional<Holder> read(Storage storage) throws IOException {
    byte[] bytes;
    try {
      bytes = storage.readAll(PATH);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
    Optional<byte[]> payload = MetadataFile.decode(bytes);
    if (payload.isEmpty()) {
      return Optional.empty();
    }
    try {
      ByteReader r = new ByteReader(payload.get());
      return Optional.of(new Holder(r.readVarLong(), r.readString()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }
}
