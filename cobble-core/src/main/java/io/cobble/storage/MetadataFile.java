package io.cobble.storage;

import io.cobble.CobbleException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Metadata files (manifests, pointers, schemas, plans): a checksummed envelope and an atomic way to
 * publish it. A file that is missing, truncated, or fails its magic or checksum reads as absent,
 * never as data, so a torn or damaged file can only make a reader fall back to older state.
 *
 * <p>Layout, big-endian: magic {@code "CBMD"} (4 bytes), format version (1), kind (1: data or
 * pointer), reserved zeros (2), payload length (4), payload, CRC32C of all preceding bytes (4).
 *
 * <p>Where {@link Storage#atomicRename()} holds (file systems) the envelope is published with
 * {@link Storage#publishAtomically}: temporary file, fsync, rename. Elsewhere (object stores) the
 * envelope goes write-once under a new name {@code <path>.gen-<uuid>}, and {@code <path>} becomes a
 * small pointer to it; the previous generation is deleted afterwards. A reader that sees an old
 * pointer therefore finds an older complete file, never a half-replaced one.
 */
public final class MetadataFile {

  public static final int FORMAT_VERSION = 1;

  /** Infix of the write-once generations behind a pointer. */
  public static final String GENERATION_INFIX = ".gen-";

  private static final int MAGIC = 0x43424D44; // "CBMD"
  private static final byte KIND_DATA = 0;
  private static final byte KIND_POINTER = 1;
  private static final int HEADER = 12;
  private static final int TRAILER = 4;
  // A reader racing a publisher may follow a pointer whose target was just deleted; re-reading the
  // pointer then finds the new generation.
  private static final int POINTER_READ_ATTEMPTS = 3;

  private MetadataFile() {}

  /** Wraps {@code payload} in the checksummed envelope. */
  public static byte[] encode(byte[] payload) {
    return encode(KIND_DATA, payload);
  }

  /**
   * The payload of an encoded data file, or empty if the bytes are not an intact metadata file.
   *
   * @throws IOException if the file is intact but written in a newer format than this code reads
   */
  public static Optional<byte[]> decode(byte[] file) throws IOException {
    Optional<Envelope> envelope = Envelope.parse(file);
    if (envelope.isPresent() && envelope.get().kind == KIND_DATA) {
      return Optional.of(envelope.get().payload);
    }
    return Optional.empty();
  }

  /** Publishes {@code payload} at {@code path} atomically and durably (see class comment). */
  public static void publish(Storage storage, String path, byte[] payload) throws IOException {
    StoragePath.check(path);
    if (storage.atomicRename()) {
      storage.publishAtomically(path, encode(KIND_DATA, payload));
      return;
    }
    Optional<String> previous = pointerTarget(storage, path);
    String generation = path + GENERATION_INFIX + UUID.randomUUID();
    storage.publishAtomically(generation, encode(KIND_DATA, payload));
    storage.publishAtomically(
        path, encode(KIND_POINTER, generation.getBytes(StandardCharsets.UTF_8)));
    if (previous.isPresent()) {
      storage.delete(previous.get());
    }
  }

  /** {@link #publish} of {@code name} in the local directory {@code dir} (a Db's own files). */
  public static void publishIn(Path dir, String name, byte[] payload) {
    try (Storage s = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      publish(s, name, payload);
    } catch (IOException e) {
      throw new CobbleException("cannot write " + dir.resolve(name), e);
    }
  }

  /** {@link #read} of {@code name} in the local directory {@code dir} (a Db's own files). */
  public static Optional<byte[]> readIn(Path dir, String name) {
    try (Storage s = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      return read(s, name);
    } catch (IOException e) {
      throw new CobbleException("cannot read " + dir.resolve(name), e);
    }
  }

  /**
   * Reads the metadata published at {@code path}: empty if it is missing or fails its checks.
   *
   * @throws IOException if the storage fails, or the file is from a newer format version
   */
  public static Optional<byte[]> read(Storage storage, String path) throws IOException {
    for (int attempt = 0; attempt < POINTER_READ_ATTEMPTS; attempt++) {
      Optional<Envelope> envelope = readEnvelope(storage, path);
      if (envelope.isEmpty()) {
        return Optional.empty();
      }
      if (envelope.get().kind == KIND_DATA) {
        return Optional.of(envelope.get().payload);
      }
      Optional<String> target = generationOf(path, envelope.get());
      if (target.isEmpty()) {
        return Optional.empty();
      }
      try {
        return decode(storage.readAll(target.get()));
      } catch (NoSuchFileException e) {
        // Replaced and deleted since the pointer was read: read the pointer again.
      }
    }
    return Optional.empty();
  }

  private static Optional<String> pointerTarget(Storage storage, String path) throws IOException {
    Optional<Envelope> envelope = readEnvelope(storage, path);
    if (envelope.isEmpty() || envelope.get().kind != KIND_POINTER) {
      return Optional.empty();
    }
    return generationOf(path, envelope.get());
  }

  /** The pointer's target, if it names a generation of this very path (nothing else is read). */
  private static Optional<String> generationOf(String path, Envelope pointer) {
    String target = new String(pointer.payload, StandardCharsets.UTF_8);
    if (target.startsWith(path + GENERATION_INFIX) && target.indexOf('/', path.length()) < 0) {
      return Optional.of(target);
    }
    return Optional.empty();
  }

  private static Optional<Envelope> readEnvelope(Storage storage, String path) throws IOException {
    try {
      return Envelope.parse(storage.readAll(path));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  private static byte[] encode(byte kind, byte[] payload) {
    ByteBuffer out = ByteBuffer.allocate(HEADER + payload.length + TRAILER);
    out.putInt(MAGIC).put((byte) FORMAT_VERSION).put(kind).putShort((short) 0);
    out.putInt(payload.length).put(payload);
    out.putInt(crc(out.array(), out.position()));
    return out.array();
  }

  private static int crc(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }

  private static final class Envelope {
    final byte kind;
    final byte[] payload;

    private Envelope(byte kind, byte[] payload) {
      this.kind = kind;
      this.payload = payload;
    }

    static Optional<Envelope> parse(byte[] file) throws IOException {
      if (file.length < HEADER + TRAILER) {
        return Optional.empty();
      }
      ByteBuffer in = ByteBuffer.wrap(file);
      if (in.getInt() != MAGIC) {
        return Optional.empty();
      }
      int version = in.get() & 0xFF;
      byte kind = in.get();
      short reserved = in.getShort();
      int length = in.getInt();
      if (length != file.length - HEADER - TRAILER) {
        return Optional.empty();
      }
      int stored = ByteBuffer.wrap(file, file.length - TRAILER, TRAILER).getInt();
      if (stored != crc(file, file.length - TRAILER)) {
        return Optional.empty();
      }
      // Checked only after the checksum: a damaged version byte is damage, not a newer format.
      if (version > FORMAT_VERSION) {
        throw new IOException(
            "Metadata file has format version "
                + version
                + "; this Cobble reads up to "
                + FORMAT_VERSION
                + ". Upgrade Cobble to read it.");
      }
      if (version < 1 || reserved != 0 || (kind != KIND_DATA && kind != KIND_POINTER)) {
        return Optional.empty();
      }
      byte[] payload = new byte[length];
      in.get(payload);
      return Optional.of(new Envelope(kind, payload));
    }
  }
}
