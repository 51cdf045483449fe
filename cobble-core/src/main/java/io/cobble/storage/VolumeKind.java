package io.cobble.storage;

/** What a {@link Volume} is used for. A volume serves one or more kinds. */
public enum VolumeKind {
  /** Working data files (SSTs, value logs), preferred first. */
  PRIMARY_HIGH,
  /** Working data files, used when high-priority volumes are full or slow. */
  PRIMARY_MEDIUM,
  /** Working data files, used last. */
  PRIMARY_LOW,
  /** Metadata files (manifests, pointers, schemas). */
  META,
  /** Snapshot files and manifests, usually shared storage. */
  SNAPSHOT,
  /** Local copies of remote files; may be wiped at any time. */
  CACHE,
  /** Files read but never written, for example another job's snapshots. */
  READ_ONLY;

  public boolean isPrimary() {
    return this == PRIMARY_HIGH || this == PRIMARY_MEDIUM || this == PRIMARY_LOW;
  }
}
