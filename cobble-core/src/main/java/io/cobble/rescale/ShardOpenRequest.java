package io.cobble.rescale;

import io.cobble.Config;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What {@link ShardOpener} opens: shard {@code shardId} in the working directory {@code workDir},
 * owning {@code ranges}, from the shard snapshots {@code sources} on {@code volume} (none for a
 * new, empty shard). Build one with {@link #builder}.
 */
public final class ShardOpenRequest {
  private final Storage volume;
  private final Path workDir;
  private final Config config;
  private final String shardId;
  private final List<BucketRange> ranges;
  private final List<ShardRef> sources;
  private final Storage primary;

  private ShardOpenRequest(Builder b) {
    this.primary = b.primary;
    this.volume = b.volume;
    this.workDir = b.workDir;
    this.config = b.config;
    this.shardId = b.shardId;
    this.ranges = Collections.unmodifiableList(new ArrayList<>(b.ranges));
    this.sources = Collections.unmodifiableList(new ArrayList<>(b.sources));
  }

  /**
   * A request to open shard {@code shardId} in {@code workDir} with {@code config} (whose {@code
   * bucket-ranges} the opener replaces by the requested ranges), reading snapshots on {@code
   * volume}. The caller keeps {@code volume} open until the opened Db is closed.
   */
  public static Builder builder(Storage volume, Path workDir, String shardId, Config config) {
    return new Builder(volume, workDir, shardId, config);
  }

  public Storage volume() {
    return volume;
  }

  public Path workDir() {
    return workDir;
  }

  public Config config() {
    return config;
  }

  public String shardId() {
    return shardId;
  }

  /** The bucket ranges the opened shard owns, sorted, not overlapping. */
  public List<BucketRange> ranges() {
    return ranges;
  }

  /** The snapshots to start from; empty for a new shard. */
  public List<ShardRef> sources() {
    return sources;
  }

  /**
   * The remote primary volume the shard's working files live on, with {@link #workDir()} as its
   * local cache; null when they live in {@link #workDir()}.
   */
  public Storage primary() {
    return primary;
  }

  @Override
  public String toString() {
    return "shard "
        + shardId
        + " owning "
        + BucketRange.toConfigValue(ranges)
        + " from "
        + (sources.isEmpty() ? "nothing" : sources.toString())
        + (primary == null ? "" : " onto " + primary.uri());
  }

  /** Collects a {@link ShardOpenRequest}; {@link #build()} checks it. */
  public static final class Builder {
    private final Storage volume;
    private final Path workDir;
    private final String shardId;
    private final Config config;
    private final List<BucketRange> ranges = new ArrayList<>();
    private final List<ShardRef> sources = new ArrayList<>();
    private Storage primary;

    private Builder(Storage volume, Path workDir, String shardId, Config config) {
      this.volume = volume;
      this.workDir = workDir;
      this.shardId = shardId;
      this.config = config;
    }

    /** Adds bucket ranges the shard owns. */
    public Builder ranges(List<BucketRange> owned) {
      ranges.addAll(owned);
      return this;
    }

    /** Adds one bucket range the shard owns. */
    public Builder range(BucketRange owned) {
      ranges.add(owned);
      return this;
    }

    /**
     * Puts the shard's working files on {@code primary} (object storage) instead of in the working
     * directory, which then caches them ({@link io.cobble.Db#open(Storage, Path, Config)}).
     * Snapshot files are copied onto it, so the opened Db does not read {@link #volume()}
     * afterwards. The caller keeps {@code primary} open until the Db is closed.
     */
    public Builder primary(Storage primary) {
      this.primary = primary;
      return this;
    }

    /** Adds snapshots to start from, by shard and snapshot id. */
    public Builder sources(List<ShardRef> snapshots) {
      sources.addAll(snapshots);
      return this;
    }

    /** Adds a snapshot to start from, by its manifest (read from the same volume). */
    public Builder source(ShardSnapshot manifest) {
      sources.add(ShardRef.of(manifest.shardId(), manifest.id()));
      return this;
    }

    /**
     * The request.
     *
     * @throws IllegalArgumentException if the volume, directory, config or shard id is missing, no
     *     range is given, ranges are empty or overlap, lie outside the config's {@code
     *     total-buckets}, or a snapshot is named twice
     */
    public ShardOpenRequest build() {
      if (volume == null || workDir == null || config == null || shardId == null) {
        throw new IllegalArgumentException(
            "a shard open request needs a volume, a working directory, a config and a shard id");
      }
      SnapshotStore.checkShardId(shardId);
      if (ranges.isEmpty()) {
        throw new IllegalArgumentException(
            "a shard open request for shard " + shardId + " needs the bucket ranges it owns");
      }
      Collections.sort(ranges);
      for (int i = 0; i < ranges.size(); i++) {
        BucketRange r = ranges.get(i);
        if (r.hi() >= config.totalBuckets()) {
          throw new IllegalArgumentException(
              "bucket range "
                  + r
                  + " of shard "
                  + shardId
                  + " lies outside total-buckets "
                  + config.totalBuckets());
        }
        if (i > 0 && ranges.get(i - 1).overlaps(r)) {
          throw new IllegalArgumentException(
              "bucket ranges "
                  + ranges.get(i - 1)
                  + " and "
                  + r
                  + " of shard "
                  + shardId
                  + " overlap");
        }
      }
      for (int i = 0; i < sources.size(); i++) {
        for (int j = 0; j < i; j++) {
          if (sources.get(i).shardId().equals(sources.get(j).shardId())) {
            throw new IllegalArgumentException(
                "snapshots "
                    + sources.get(j)
                    + " and "
                    + sources.get(i)
                    + " are of the same shard; name one snapshot per shard");
          }
        }
      }
      return new ShardOpenRequest(this);
    }
  }
}
