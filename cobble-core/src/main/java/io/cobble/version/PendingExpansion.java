package io.cobble.version;

import io.cobble.CobbleException;
import io.cobble.storage.MetadataFile;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The intent of a bucket expansion into a live Db, in the metadata file {@code EXPANDING}: written
 * before the {@link ExternalFiles} list grows, deleted once the manifest holds the adopted tables
 * and {@link OwnedRanges} the grown ranges. Three files change, so a crash between them is settled
 * on the next open by the manifest alone: if it holds every adopted table the expansion is rolled
 * forward (the ranges are written), else back (the external entries it added are dropped, so their
 * numbers can be reused). The Db reopens with the new ranges and files or without them, never half.
 */
public final class PendingExpansion {
  public static final String FILE_NAME = "EXPANDING";
  private static final int FORMAT = 1;

  private final int[] ownedAfter;
  private final List<Long> tables;
  private final List<Long> addedExternal;
  private final boolean hadExternal;

  public PendingExpansion(
      int[] ownedAfter, List<Long> tables, List<Long> addedExternal, boolean hadExternal) {
    this.ownedAfter = ownedAfter.clone();
    this.tables = new ArrayList<>(tables);
    this.addedExternal = new ArrayList<>(addedExternal);
    this.hadExternal = hadExternal;
  }

  public void write(Path dbDir) {
    ByteWriter w = new ByteWriter(64);
    w.writeVarInt(FORMAT);
    w.writeVarInt(ownedAfter.length);
    for (int p : ownedAfter) {
      w.writeVarInt(p);
    }
    w.writeVarInt(tables.size());
    tables.forEach(w::writeVarLong);
    w.writeVarInt(addedExternal.size());
    addedExternal.forEach(w::writeVarLong);
    w.writeByte(hadExternal ? 1 : 0);
    MetadataFile.publishIn(dbDir, FILE_NAME, w.toByteArray());
  }

  static Optional<PendingExpansion> read(Path dbDir) {
    Optional<byte[]> payload = MetadataFile.readIn(dbDir, FILE_NAME);
    if (payload.isEmpty()) {
      return Optional.empty();
    }
    ByteReader r = new ByteReader(payload.get());
    int format = r.readVarInt();
    if (format != FORMAT) {
      throw new CobbleException(
          dbDir.resolve(FILE_NAME)
              + " has format "
              + format
              + ", this version reads "
              + FORMAT
              + "; open the Db with the Cobble version that expanded it");
    }
    int[] owned = new int[r.readVarInt()];
    for (int i = 0; i < owned.length; i++) {
      owned[i] = r.readVarInt();
    }
    List<Long> tables = new ArrayList<>();
    for (int i = r.readVarInt(); i > 0; i--) {
      tables.add(r.readVarLong());
    }
    List<Long> added = new ArrayList<>();
    for (int i = r.readVarInt(); i > 0; i--) {
      added.add(r.readVarLong());
    }
    boolean hadExternal = r.readByte() != 0;
    return Optional.of(new PendingExpansion(owned, tables, added, hadExternal));
  }

  /** Marks the expansion complete: the manifest and the owned ranges hold it. */
  public static void finish(Path dbDir) {
    try {
      Files.deleteIfExists(dbDir.resolve(FILE_NAME));
    } catch (IOException e) {
      throw new CobbleException("cannot delete " + dbDir.resolve(FILE_NAME), e);
    }
  }

  /**
   * Settles an interrupted expansion in {@code dbDir} against the manifest the Db opens from (null
   * for none); call before reading {@link ExternalFiles} and {@link OwnedRanges}.
   */
  public static void recover(Path dbDir, Manifest manifest) {
    Optional<PendingExpansion> pending = read(dbDir);
    if (pending.isEmpty()) {
      return;
    }
    PendingExpansion p = pending.get();
    if (manifest != null && manifest.fileNumbers().containsAll(p.tables)) {
      OwnedRanges.write(dbDir, p.ownedAfter);
    } else {
      p.rollBack(dbDir);
    }
    finish(dbDir);
  }

  /** Drops the external entries the expansion added; the Db is as before it. */
  public void rollBack(Path dbDir) {
    Optional<ExternalFiles> external = ExternalFiles.read(dbDir);
    if (external.isPresent()) {
      Map<Long, String> kept = new LinkedHashMap<>(external.get().files());
      kept.keySet().removeAll(addedExternal);
      if (kept.isEmpty() && !hadExternal) {
        try {
          Files.deleteIfExists(dbDir.resolve(ExternalFiles.FILE_NAME));
        } catch (IOException e) {
          throw new CobbleException("cannot delete " + dbDir.resolve(ExternalFiles.FILE_NAME), e);
        }
      } else {
        new ExternalFiles(external.get().root(), kept).write(dbDir);
      }
    }
  }
}
