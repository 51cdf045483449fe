package io.cobble.rescale;

import io.cobble.CobbleException;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.EngineOptions;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.WriteBatch;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import io.cobble.schema.Schema;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ExportLease;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.version.AdoptedFiles;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The one way to open a shard from snapshots, for restore and rescale alike. Given the snapshots of
 * one or more shards on a volume, the bucket ranges the shard is to own and a working directory
 * ({@link ShardOpenRequest}), it picks how to start ({@link #plan}) and does it ({@link #open}):
 *
 * <ul>
 *   <li>{@link Mode#NEW}: no snapshot: an empty shard.
 *   <li>{@link Mode#RESUME}: one snapshot of this very shard with exactly the requested buckets:
 *       the shard resumes from it in place. Only metadata is read (the snapshot manifest, then each
 *       table's footer, properties and index); data stays on the volume and is read on demand.
 *   <li>{@link Mode#SHRINK}: every requested bucket lies in one snapshot that holds more, or is of
 *       another shard: this shard's own snapshot resumes and gives up the other buckets; another
 *       shard's files are used in place under an export lease, leaving out files with none of the
 *       requested buckets.
 *   <li>{@link Mode#ADOPT}: this shard's own snapshot plus others: it resumes from its own and
 *       takes the rest over from the others' files in place ({@link Db#expandBuckets}).
 *   <li>{@link Mode#EXPAND}: several snapshots of other shards: their files that hold requested
 *       buckets are combined in place into a new shard.
 *   <li>{@link Mode#COPY}: as {@code EXPAND}, but some file of those snapshots also spans buckets
 *       that another of them serves here (left from an earlier rescale, not yet cleaned up by
 *       {@link Db#cleanupForeignBuckets} or the background cleanup), or the snapshots' schemas
 *       differ (families created in another order, or other families: a file names its family by
 *       id), so the files cannot all be combined. The sources whose own files do fit (none of those
 *       holding their requested buckets spans a requested bucket of another source) are still
 *       combined in place when they share a schema; only the rows of the other sources' requested
 *       buckets are copied into the new shard, with their families and columns. Copied values get
 *       the default TTL again.
 * </ul>
 *
 * <p>With a remote primary volume ({@link ShardOpenRequest#primary()}) every mode works the same,
 * but the files a local shard would use in place are copied onto the primary ({@link
 * RemoteShardOpen}).
 *
 * <p>Snapshots that hold none of the requested buckets are ignored, so a caller may pass every
 * snapshot of the previous layout. Every requested bucket must be held by exactly one of the
 * others. Files used in place stay protected: by this shard's own snapshots once it resumed, or by
 * an export lease of this shard that its {@link io.cobble.snapshot.SnapshotManager} ends once its
 * first snapshot (which then refers to them itself) is published.
 */
public final class ShardOpener {
  /** Block cache of the source snapshots while rows are copied ({@link Mode#COPY}). */
  private static final long COPY_CACHE = 8L << 20;

  private ShardOpener() {}

  /** How a shard starts; see {@link ShardOpener}. */
  public enum Mode {
    NEW,
    RESUME,
    SHRINK,
    ADOPT,
    EXPAND,
    COPY
  }

  /** What {@link #plan} decided: the mode and the snapshots it uses. */
  public static final class Plan {
    private final Mode mode;
    private final List<ShardSnapshot> sources;

    private Plan(Mode mode, List<ShardSnapshot> sources) {
      this.mode = mode;
      this.sources = Collections.unmodifiableList(sources);
    }

    public Mode mode() {
      return mode;
    }

    /** The manifests of the snapshots that hold requested buckets, in request order. */
    public List<ShardSnapshot> sources() {
      return sources;
    }

    @Override
    public String toString() {
      List<ShardRef> refs = new ArrayList<>();
      sources.forEach(s -> refs.add(ShardRef.of(s.shardId(), s.id())));
      return mode + " from " + refs;
    }
  }

  /** An opened shard: its Db (the caller closes it) and how it was opened. */
  public static final class Opened {
    private final Db db;
    private final Plan plan;
    private final Optional<Long> resumed;

    private Opened(Db db, Plan plan, Optional<Long> resumed) {
      this.db = db;
      this.plan = plan;
      this.resumed = resumed;
    }

    public Db db() {
      return db;
    }

    public Plan plan() {
      return plan;
    }

    /**
     * The snapshot of this shard the Db resumed from ({@link Mode#RESUME}, or {@link Mode#SHRINK}
     * and {@link Mode#ADOPT} of its own snapshot); the Db shares its files until a newer snapshot
     * of the shard is published.
     */
    public Optional<Long> resumedSnapshot() {
      return resumed;
    }
  }

  /**
   * Decides how {@code request} opens, reading only snapshot manifests.
   *
   * @throws CobbleException if a snapshot does not exist or its manifest is damaged
   * @throws IllegalArgumentException if the snapshots do not fit the request: a bucket count other
   *     than the config's, or a requested bucket that none or several of them hold
   */
  public static Plan plan(ShardOpenRequest request) {
    if (request.sources().isEmpty()) {
      return new Plan(Mode.NEW, new ArrayList<>());
    }
    int total = request.config().totalBuckets();
    SnapshotStore store = new SnapshotStore(request.volume());
    List<ShardSnapshot> used = new ArrayList<>();
    for (ShardRef ref : request.sources()) {
      ShardSnapshot s = store.require(ref.shardId(), ref.snapshotId());
      if (s.totalBuckets() != total) {
        throw new IllegalArgumentException(
            "snapshot "
                + s.id()
                + " of shard "
                + s.shardId()
                + " has "
                + s.totalBuckets()
                + " buckets, the config's total-buckets is "
                + total
                + "; the bucket count is fixed");
      }
      if (overlapsAny(s.ranges(), request.ranges())) {
        used.add(s);
      }
    }
    checkCoverage(request, used);
    ShardSnapshot own = null;
    for (ShardSnapshot s : used) {
      if (s.shardId().equals(request.shardId())) {
        own = s;
      }
    }
    if (used.size() == 1) {
      boolean exact = normalize(used.get(0).ranges()).equals(normalize(request.ranges()));
      return new Plan(exact && own != null ? Mode.RESUME : Mode.SHRINK, used);
    }
    if (own != null) {
      return new Plan(Mode.ADOPT, used);
    }
    return new Plan(
        fitFileByFile(used, request.ranges()) && sameSchema(used) ? Mode.EXPAND : Mode.COPY, used);
  }

  /**
   * Opens the shard {@code request} describes, replacing whatever its working directory held.
   *
   * @throws CobbleException if a snapshot does not exist, its manifest is damaged, or its files
   *     cannot be read
   * @throws IllegalArgumentException if the snapshots do not fit the request (see {@link #plan})
   */
  public static Opened open(ShardOpenRequest request) {
    Plan plan = plan(request);
    Optional<Long> resumed = Optional.empty();
    if (plan.mode == Mode.RESUME || plan.mode == Mode.SHRINK || plan.mode == Mode.ADOPT) {
      for (ShardSnapshot s : plan.sources) {
        if (s.shardId().equals(request.shardId())) {
          resumed = Optional.of(s.id());
        }
      }
    }
    return new Opened(openAs(plan, request), plan, resumed);
  }

  private static Db openAs(Plan plan, ShardOpenRequest r) {
    Config owning = Rescale.owning(r.config(), r.ranges());
    List<ShardRef> refs = new ArrayList<>();
    plan.sources.forEach(s -> refs.add(ShardRef.of(s.shardId(), s.id())));
    switch (plan.mode) {
      case NEW:
        return openNew(r, owning);
      case RESUME:
        return resume(plan.sources.get(0), r);
      case SHRINK:
        if (refs.get(0).shardId().equals(r.shardId())) {
          return resumeOwn(plan.sources.get(0), r);
        }
        return assembled(refs, r);
      case ADOPT:
        return adopt(plan, r);
      case EXPAND:
        return assembled(refs, r);
      default:
        return copy(plan, r, owning);
    }
  }

  private static Db openNew(ShardOpenRequest r, Config owning) {
    return r.primary() != null ? RemoteShardOpen.openNew(r) : Db.open(r.workDir(), owning);
  }

  private static Db resume(ShardSnapshot own, ShardOpenRequest r) {
    return r.primary() != null
        ? RemoteShardOpen.resume(own, r)
        : SnapshotRestore.resume(r.workDir(), r.volume(), r.shardId(), own.id(), r.config());
  }

  private static Db assembled(List<ShardRef> refs, ShardOpenRequest r) {
    return r.primary() != null
        ? RemoteShardOpen.assembled(refs, r)
        : Rescale.expandBuckets(r.workDir(), r.volume(), refs, r.ranges(), r.shardId(), r.config());
  }

  /** Resumes the shard's own snapshot and gives up its buckets outside the request. */
  private static Db resumeOwn(ShardSnapshot own, ShardOpenRequest r) {
    Db db = resume(own, r);
    try {
      List<BucketRange> kept = intersection(own.ranges(), r.ranges());
      if (!normalize(kept).equals(normalize(own.ranges()))) {
        db.shrinkBuckets(pairs(kept));
      }
      return db;
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /** Resumes the shard's own snapshot, then takes the other buckets over from the others. */
  private static Db adopt(Plan plan, ShardOpenRequest r) {
    ShardSnapshot own = null;
    List<ShardRef> others = new ArrayList<>();
    for (ShardSnapshot s : plan.sources) {
      if (s.shardId().equals(r.shardId())) {
        own = s;
      } else {
        others.add(ShardRef.of(s.shardId(), s.id()));
      }
    }
    Db db = resumeOwn(own, r);
    try {
      List<BucketRange> rest = new ArrayList<>();
      for (ShardSnapshot s : plan.sources) {
        if (s != own) {
          rest.addAll(intersection(s.ranges(), r.ranges()));
        }
      }
      Collections.sort(rest);
      AdoptedFiles adopted = Rescale.adoptable(db, r.shardId(), r.volume(), others, rest);
      SnapshotStore store = new SnapshotStore(r.volume());
      // Kept after a failure too: the Db may hold the files, and the shard's snapshot manager ends
      // the lease once its first snapshot refers to them.
      ExportLease lease = store.createLease(r.shardId(), adopted.volumePaths());
      for (ShardRef source : others) {
        if (store.read(source.shardId(), source.snapshotId()).isEmpty()) {
          lease.release();
          throw new CobbleException(source + " was expired while opening shard " + r.shardId());
        }
      }
      db.expandBuckets(pairs(rest), adopted, r.volume());
      if (r.primary() != null) {
        // The adopted files were copied onto the primary: nothing reads them in place.
        lease.release();
      }
      return db;
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /**
   * A new shard holding the requested buckets: the files of the sources whose files fit (see {@link
   * #fitting}) are combined as they are and used in place, as {@link Mode#EXPAND} does, and only
   * the rows of the other sources are copied in. On a remote primary every row is copied.
   */
  private static Db copy(Plan plan, ShardOpenRequest r, Config owning) {
    List<ShardSnapshot> adopted =
        r.primary() == null ? fitting(plan.sources, r.ranges()) : Collections.emptyList();
    Db db = adopted.isEmpty() ? openNew(r, owning) : openAdopting(adopted, r, owning);
    try {
      Config reading =
          Config.builder()
              .setAll(r.config().values())
              .set(EngineOptions.BLOCK_CACHE_SIZE.key(), COPY_CACHE)
              .mergeOperatorResolver(r.config().mergeOperatorResolver())
              .build();
      WriteBatch batch = new WriteBatch();
      for (ShardSnapshot s : plan.sources) {
        if (adopted.contains(s)) {
          continue;
        }
        addMissingColumns(db, s.schema());
        try (ReadOnlyDb source = ReadOnlyDb.open(r.volume(), s.shardId(), s.id(), reading)) {
          for (BucketRange range : intersection(s.ranges(), r.ranges())) {
            for (int bucket = range.lo(); bucket <= range.hi(); bucket++) {
              for (FamilySchema family : s.schema().families()) {
                copyBucket(source, bucket, family, db, batch);
              }
            }
          }
        }
      }
      return db;
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /**
   * Opens the new shard owning all requested buckets from the files of {@code adopted}: they hold
   * rows of no bucket another source serves here, so the rows copied in later meet none of theirs.
   */
  private static Db openAdopting(List<ShardSnapshot> adopted, ShardOpenRequest r, Config owning) {
    List<ShardRef> refs = new ArrayList<>();
    List<BucketRange> ranges = new ArrayList<>();
    for (ShardSnapshot s : adopted) {
      refs.add(ShardRef.of(s.shardId(), s.id()));
      ranges.addAll(intersection(s.ranges(), r.ranges()));
    }
    ShardSnapshot assembled =
        Rescale.assemble(r.volume(), refs, normalize(ranges), r.shardId(), r.config());
    return SnapshotRestore.openAssembled(
        r.workDir(), r.volume(), assembled, owning, r.shardId(), refs);
  }

  /**
   * The sources whose table files can be used as they are next to rows copied from the others: no
   * file of theirs that holds requested buckets of its own source spans a requested bucket another
   * source serves. Empty unless they share one schema.
   */
  private static List<ShardSnapshot> fitting(
      List<ShardSnapshot> sources, List<BucketRange> requested) {
    List<List<BucketRange>> parts = new ArrayList<>();
    for (ShardSnapshot s : sources) {
      parts.add(intersection(s.ranges(), requested));
    }
    List<ShardSnapshot> fit = new ArrayList<>();
    for (int i = 0; i < sources.size(); i++) {
      if (fits(sources.get(i), i, parts)) {
        fit.add(sources.get(i));
      }
    }
    return sameSchema(fit) ? fit : Collections.emptyList();
  }

  /** Whether no file of source {@code i} holding its part spans the part of another source. */
  private static boolean fits(ShardSnapshot source, int i, List<List<BucketRange>> parts) {
    for (SnapshotFile file : source.files()) {
      if (file.isVlog()) {
        continue;
      }
      BucketRange span = file.bucketSpan();
      if (!overlapsAny(List.of(span), parts.get(i))) {
        continue;
      }
      for (int j = 0; j < parts.size(); j++) {
        if (j != i && overlapsAny(List.of(span), parts.get(j))) {
          return false;
        }
      }
    }
    return true;
  }

  private static void copyBucket(
      ReadOnlyDb source, int bucket, FamilySchema family, Db target, WriteBatch batch) {
    FamilySchema into = target.schema().requireFamily(family.name());
    int[] column = new int[family.columnCount()];
    for (int i = 0; i < column.length; i++) {
      column[i] = into.indexOf(family.columns().get(i).name());
    }
    try (ScanCursor rows = source.scan(bucket, family.name(), null, null, ScanOptions.DEFAULT)) {
      while (rows.hasNext()) {
        Row row = rows.next();
        byte[][] values = row.columns();
        batch.clear();
        for (int i = 0; i < values.length; i++) {
          if (values[i] != null) {
            batch.put(bucket, family.name(), row.key(), column[i], values[i]);
          }
        }
        target.write(batch);
      }
    }
  }

  /** Gives {@code db} every family and column of {@code schema} it lacks, by name. */
  private static void addMissingColumns(Db db, Schema schema) {
    for (FamilySchema family : schema.families()) {
      FamilySchema present = db.schema().family(family.name());
      if (present == null) {
        List<ColumnSpec> specs = new ArrayList<>();
        family.columns().forEach(c -> specs.add(c.spec()));
        db.createFamily(family.name(), specs);
        continue;
      }
      for (Column c : family.columns()) {
        if (present.indexOf(c.name()) < 0) {
          db.addColumn(family.name(), c.spec());
        }
      }
    }
  }

  /**
   * Whether the sources' table files can be combined as they are: no file that holds requested
   * buckets of its own source also spans requested buckets another source serves. A file may still
   * span buckets its source gave up (left from an earlier rescale, not yet cleaned up) as long as
   * no other source serves them here: the new shard does not own them, so its reads skip them and
   * its compaction drops them. Files record their smallest and largest internal key, which starts
   * with the big-endian bucket.
   */
  private static boolean fitFileByFile(List<ShardSnapshot> sources, List<BucketRange> requested) {
    List<List<BucketRange>> parts = new ArrayList<>();
    for (ShardSnapshot s : sources) {
      parts.add(intersection(s.ranges(), requested));
    }
    for (int i = 0; i < sources.size(); i++) {
      if (!fits(sources.get(i), i, parts)) {
        return false;
      }
    }
    return true;
  }

  /** Whether the sources have one schema, so a family id means the same family in all of them. */
  private static boolean sameSchema(List<ShardSnapshot> sources) {
    for (ShardSnapshot s : sources) {
      if (!Rescale.sameSchema(sources.get(0).schema(), s.schema())) {
        return false;
      }
    }
    return true;
  }

  private static void checkCoverage(ShardOpenRequest request, List<ShardSnapshot> used) {
    for (BucketRange w : request.ranges()) {
      for (int b = w.lo(); b <= w.hi(); b++) {
        List<String> holders = new ArrayList<>();
        for (ShardSnapshot s : used) {
          for (BucketRange r : s.ranges()) {
            if (r.contains(b)) {
              holders.add("snapshot " + s.id() + " of shard " + s.shardId());
            }
          }
        }
        if (holders.size() != 1) {
          throw new IllegalArgumentException(
              "cannot open "
                  + request
                  + ": bucket "
                  + b
                  + " is held by "
                  + (holders.isEmpty() ? "none of the snapshots" : String.join(" and ", holders))
                  + "; pass the snapshots whose shards together owned each bucket exactly once");
        }
      }
    }
  }

  private static boolean overlapsAny(List<BucketRange> a, List<BucketRange> b) {
    for (BucketRange x : a) {
      for (BucketRange y : b) {
        if (x.overlaps(y)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The buckets in both, as sorted ranges. */
  private static List<BucketRange> intersection(List<BucketRange> a, List<BucketRange> b) {
    List<BucketRange> out = new ArrayList<>();
    for (BucketRange x : a) {
      for (BucketRange y : b) {
        if (x.overlaps(y)) {
          out.add(BucketRange.of(Math.max(x.lo(), y.lo()), Math.min(x.hi(), y.hi())));
        }
      }
    }
    return normalize(out);
  }

  /** Sorted, with overlapping and adjacent ranges joined: equal lists mean equal buckets. */
  private static List<BucketRange> normalize(List<BucketRange> ranges) {
    List<BucketRange> sorted = new ArrayList<>(ranges);
    Collections.sort(sorted);
    List<BucketRange> out = new ArrayList<>();
    for (BucketRange r : sorted) {
      BucketRange last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && r.lo() <= last.hi() + 1) {
        out.set(out.size() - 1, BucketRange.of(last.lo(), Math.max(last.hi(), r.hi())));
      } else {
        out.add(r);
      }
    }
    return out;
  }

  private static int[] pairs(List<BucketRange> ranges) {
    return RemoteShardOpen.pairs(ranges);
  }
}
