package io.cobble.version;

import io.cobble.memtable.MemTable;
import io.cobble.schema.Schema;
import io.cobble.vlog.ValueLogFile;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/** A change to apply to the current version: memtables, files, value logs, schema. */
public final class VersionEdit {
  MemTable active;
  List<MemTable> immutables;
  final List<FileMeta> removed = new ArrayList<>();
  final List<FileMeta> added = new ArrayList<>();
  final List<int[]> addedLevels = new ArrayList<>();
  final List<ValueLogFile> addedVlogs = new ArrayList<>();
  final Map<FileMeta, List<FileMeta>> replaced = new IdentityHashMap<>();
  Schema schema;

  public VersionEdit memtables(MemTable active, List<MemTable> immutables) {
    this.active = active;
    this.immutables = immutables;
    return this;
  }

  public VersionEdit remove(FileMeta f) {
    removed.add(f);
    return this;
  }

  public VersionEdit add(int level, FileMeta f) {
    added.add(f);
    addedLevels.add(new int[] {level});
    return this;
  }

  /**
   * Replaces {@code f} by {@code outputs} (its rows rewritten, none outside its key range) at its
   * level and, in L0, at its position, so it keeps its age relative to the other L0 files.
   */
  public VersionEdit replace(FileMeta f, List<FileMeta> outputs) {
    removed.add(f);
    replaced.put(f, new ArrayList<>(outputs));
    return this;
  }

  public VersionEdit addVlog(ValueLogFile f) {
    addedVlogs.add(f);
    return this;
  }

  public VersionEdit schema(Schema s) {
    this.schema = s;
    return this;
  }

  /** True when durable state changes and the manifest must be rewritten. */
  boolean durable() {
    return !removed.isEmpty() || !added.isEmpty() || !addedVlogs.isEmpty() || schema != null;
  }
}
