package io.cobble.flink.catalog;

import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catalog's metadata as numbered versions {@code catalog/v-<version>}, each a whole {@link
 * CatalogState} in a checksummed {@link MetadataFile} envelope. A version is written with {@link
 * Storage#createExclusively} (a hard link on file systems, a conditional PUT on S3): the file
 * appears whole or not at all, and of two sessions writing the same next version exactly one
 * succeeds while the other gets a {@link CatalogConflictException} and changes nothing. The newest
 * version is the metadata; the few before it stay for readers that listed a moment ago.
 */
final class CatalogVersions {

  private static final Logger LOG = LoggerFactory.getLogger(CatalogVersions.class);

  static final String DIRECTORY = "catalog/";
  private static final String PREFIX = DIRECTORY + "v-";

  /** Versions kept behind the newest. */
  private static final int KEEP = 8;

  /** Reads of the newest version while pruning by other sessions moves it on. */
  private static final int READ_ATTEMPTS = 5;

  private final Storage storage;
  private final String describe;

  CatalogVersions(Storage storage, String describe) {
    this.storage = storage;
    this.describe = describe;
  }

  /** The newest version; {@link CatalogState#empty()} when none was written yet. */
  CatalogState latest() {
    try {
      for (int attempt = 1; ; attempt++) {
        try {
          List<Long> versions = versions();
          if (versions.isEmpty()) {
            return CatalogState.empty();
          }
          return read(versions.get(versions.size() - 1));
        } catch (NoSuchFileException e) {
          // Another session pruned a version between our listing and our read (or under the
          // listing itself): list again.
          if (attempt == READ_ATTEMPTS) {
            throw e;
          }
        }
      }
    } catch (IOException e) {
      throw new CatalogException(
          "Cannot read the metadata of the Cobble catalog at " + describe, e);
    }
  }

  /**
   * Publishes {@code next}, which must be the version after {@code base}.
   *
   * @throws CatalogConflictException if another session published that version first
   */
  void commit(CatalogState base, CatalogState next) {
    if (next.version() != base.version() + 1) {
      throw new IllegalArgumentException(
          "version " + next.version() + " does not follow " + base.version());
    }
    boolean created;
    try {
      created = storage.createExclusively(path(next.version()), MetadataFile.encode(next.encode()));
    } catch (IOException e) {
      throw new CatalogException(
          "Cannot write version " + next.version() + " of the Cobble catalog at " + describe, e);
    }
    if (!created) {
      throw new CatalogConflictException(
          "The Cobble catalog at "
              + describe
              + " was changed by another session at the same time (its metadata version "
              + next.version()
              + " was written first). This statement changed nothing; run it again.");
    }
    prune(next.version());
  }

  private CatalogState read(long version) throws IOException {
    String path = path(version);
    Optional<byte[]> payload = MetadataFile.decode(storage.readAll(path));
    if (!payload.isPresent()) {
      throw new CatalogException(
          "The metadata file "
              + path
              + " of the Cobble catalog at "
              + describe
              + " is damaged (bad checksum or truncated); restore it from a backup, or delete it"
              + " to go back to the version before.");
    }
    CatalogState state = CatalogState.decode(payload.get());
    if (state.version() != version) {
      throw new CatalogException(
          "The metadata file " + path + " holds version " + state.version() + ", not " + version);
    }
    return state;
  }

  private List<Long> versions() throws IOException {
    List<Long> versions = new ArrayList<>();
    for (String path : storage.list(DIRECTORY)) {
      if (path.startsWith(PREFIX)) {
        try {
          versions.add(Long.parseLong(path.substring(PREFIX.length())));
        } catch (NumberFormatException notAVersion) {
          // Not a version file: ignored.
        }
      }
    }
    versions.sort(null);
    return versions;
  }

  /** Deletes versions more than {@link #KEEP} behind {@code newest}; failures only leave files. */
  private void prune(long newest) {
    try {
      List<String> old = new ArrayList<>();
      for (long version : versions()) {
        if (version < newest - KEEP) {
          old.add(path(version));
        }
      }
      storage.deleteAll(old);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot delete old metadata versions of the Cobble catalog at {}", describe, e);
    }
  }

  static String path(long version) {
    return PREFIX + String.format("%020d", version);
  }
}
