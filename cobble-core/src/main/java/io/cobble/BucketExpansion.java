package io.cobble;

import io.cobble.iterator.KvIterator;
import io.cobble.row.ColumnLayout;
import io.cobble.sst.Table;
import io.cobble.storage.DataFile;
import io.cobble.storage.Storage;
import io.cobble.util.Bytes;
import io.cobble.version.AdoptedFiles;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.PendingExpansion;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * Takes buckets over into an open shard: adopts tables and value logs of other shards' snapshots
 * where they lie on a snapshot volume (see {@link Db#expandBuckets}). First drops the rows of those
 * buckets that the shard's own files still hold from before it gave them up, then places each
 * source's levels below one another where they overlap nothing, copying only a table that also
 * holds rows of buckets the shard owns. Crash-safe through {@link PendingExpansion}. {@code
 * io.cobble.rescale.Rescale} checks the sources and holds the export lease.
 */
final class BucketExpansion {
  private final ShardState state;
  private final CompactionScheduler compactions;
  private final Flusher flusher;

  BucketExpansion(ShardState state, CompactionScheduler compactions, Flusher flusher) {
    this.state = state;
    this.compactions = compactions;
    this.flusher = flusher;
  }

  /** See {@link Db#expandBuckets}. */
  void expand(int[] pairs, AdoptedFiles adopted, Storage volume) {
    state.checkOpen();
    state.ownership.grownBy(pairs);
    if (state.remote != null) {
      expandRemote(pairs, adopted, volume);
      return;
    }
    Optional<ExternalFiles> existing = ExternalFiles.read(state.dir);
    if (existing.isPresent() && !existing.get().isOn(volume)) {
      throw new IllegalArgumentException(
          "the Db in "
              + state.dir
              + " reads files in place on "
              + existing.get().root()
              + "; it can adopt files only from that volume, not from "
              + volume.uri());
    }
    Storage owned = state.ownedVolume();
    Storage reader = owned != null && owned.uri().equals(volume.uri()) ? owned : volume;
    flusher.flushAll();
    Set<Integer> held = compactions.holdAllTrees();
    try {
      // Again while holding the trees, which also keeps out a concurrent expansion.
      int[] grown = state.ownership.grownBy(pairs);
      purgeBuckets(pairs);
      adopt(pairs, grown, adopted, volume.uri(), reader, ExternalFiles.read(state.dir));
    } finally {
      compactions.releaseTrees(held);
    }
  }

  /**
   * A remote primary holds only its own files: the adopted ones are copied onto it (tables under
   * new numbers, value logs under theirs, which rows point to) before one version edit installs
   * them; the grown ranges are published after that edit's manifest. A crash before the manifest
   * leaves unreferenced copies that the next open sweeps; one between the manifest and the ranges
   * leaves the adopted rows in buckets the Db does not own, never read and dropped by compaction or
   * by the purge of a retried expansion. So after a crash the Db has all of it or none of it.
   */
  private void expandRemote(int[] pairs, AdoptedFiles adopted, Storage volume) {
    flusher.flushAll();
    Set<Integer> held = compactions.holdAllTrees();
    try {
      int[] grown = state.ownership.grownBy(pairs);
      purgeBuckets(pairs);
      adoptCopies(pairs, grown, adopted, volume);
    } finally {
      compactions.releaseTrees(held);
    }
  }

  private void adoptCopies(int[] pairs, int[] grown, AdoptedFiles adopted, Storage volume) {
    Version cur = state.versions.current();
    VersionEdit edit = new VersionEdit();
    Map<Long, Boolean> uploaded = new HashMap<>();
    List<FileMeta> opened = new ArrayList<>();
    boolean applying = false;
    try {
      for (AdoptedFiles.LogFile l : adopted.logs()) {
        ValueLogFile have = cur.vlogFiles().get(l.file().number());
        if (have == null) {
          long n = l.file().number();
          copyIn(volume, l.volumePath(), l.file().size(), state.versions.vlogPath(n));
          uploaded.put(n, true);
          state.upload(n, true);
          edit.addVlog(l.file());
        } else if (have.size() != l.file().size()) {
          throw new IllegalArgumentException(
              "value-log number "
                  + l.file().number()
                  + " names different files in "
                  + state.remote.storage().uri()
                  + " and in the sources ("
                  + l.volumePath()
                  + "); these shards cannot be combined");
        }
      }
      List<AdoptedFiles.TableFile> tables = adopted.tables();
      List<Integer> l0Order = new ArrayList<>();
      int[] levels = placeAdopted(cur, tables, l0Order);
      List<List<FileMeta>> placed = new ArrayList<>();
      for (int i = 0; i < tables.size(); i++) {
        AdoptedFiles.TableFile t = tables.get(i);
        long n = state.versions.newFileNumber();
        copyIn(volume, t.volumePath(), t.size(), state.versions.tablePath(n));
        uploaded.put(n, false);
        state.upload(n, false);
        FileMeta meta =
            new FileMeta(
                n, t.family(), t.size(), t.properties(), state.openTable(n, levels[i], -1));
        opened.add(meta);
        if (reachesOwned(meta)) {
          // As for a local Db: rows of buckets this shard owns must not mix with its own.
          List<FileMeta> copy =
              compactions.rewriteKeeping(
                  meta, levels[i], state.layouts().byId(t.family()), inRanges(pairs), edit);
          opened.addAll(copy);
          copy.forEach(f -> uploaded.put(f.number(), false));
          placed.add(copy);
        } else {
          placed.add(List.of(meta));
        }
      }
      applying = true;
      install(edit, placed, levels, l0Order, grown);
    } catch (RuntimeException e) {
      if (!applying) {
        opened.forEach(f -> f.table().close());
        state.remote.discard(uploaded);
      }
      throw e;
    }
    // Copies replaced by a rewrite without the owned buckets' rows are named by no manifest: their
    // cached copies go now, the objects with the next open's sweep.
    Set<Long> live = new HashSet<>();
    for (Tree t : state.versions.current().trees()) {
      t.allFiles().forEach(f -> live.add(f.number()));
    }
    for (FileMeta f : opened) {
      if (!live.contains(f.number())) {
        f.table().close();
        state.remote.discard(Map.of(f.number(), false));
      }
    }
  }

  /** Copies a file of the snapshot volume into the Db's directory, to be uploaded from there. */
  private static void copyIn(Storage volume, String path, long size, Path target) {
    try (OutputStream out = Files.newOutputStream(target)) {
      DataFile.on(volume, path).copyTo(out, size);
    } catch (IOException e) {
      throw new CobbleException("cannot copy " + volume.uri() + "/" + path + " to " + target, e);
    }
  }

  /**
   * Rewrites, in place, every file holding rows of the (unowned) buckets {@code pairs}, dropping
   * all unowned rows. Memtables hold none: the caller flushed, and unowned buckets take no writes.
   */
  private void purgeBuckets(int[] pairs) {
    Version v = state.versions.acquire();
    try {
      for (int fam = 0; fam < v.trees().size(); fam++) {
        ColumnLayout layout = state.layouts().byId(fam);
        if (layout == null) {
          continue;
        }
        VersionEdit edit = new VersionEdit();
        boolean changedTree = false;
        Tree tree = v.tree(fam);
        for (int level = 0; level < tree.levelCount(); level++) {
          for (FileMeta f : tree.level(level)) {
            if (holdsBuckets(f, pairs)) {
              edit.replace(
                  f, compactions.rewriteKeeping(f, level, layout, state.ownership::owns, edit));
              changedTree = true;
            }
          }
        }
        if (changedTree) {
          state.mutex.lock();
          try {
            state.versions.apply(edit);
            compactions.countRewrite();
            state.changed.signalAll();
          } finally {
            state.mutex.unlock();
          }
        }
      }
    } finally {
      v.unref();
    }
  }

  private static boolean holdsBuckets(FileMeta f, int[] pairs) {
    int first = Bytes.getShort(f.smallest(), 0);
    int last = Bytes.getShort(f.largest(), 0);
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i] > last || pairs[i + 1] < first) {
        continue;
      }
      try (KvIterator it = f.table().iterator(1)) {
        it.seek(new byte[] {(byte) (pairs[i] >>> 8), (byte) pairs[i]});
        if (it.valid() && Bytes.getShort(it.key(), 0) <= pairs[i + 1]) {
          return true;
        }
      }
    }
    return false;
  }

  /** Installs the adopted files and the grown ranges; the trees are held. */
  private void adopt(
      int[] pairs,
      int[] grown,
      AdoptedFiles adopted,
      URI root,
      Storage reader,
      Optional<ExternalFiles> existing) {
    Version cur = state.versions.current();
    Map<Long, String> added = new LinkedHashMap<>();
    List<ValueLogFile> logs = new ArrayList<>();
    for (AdoptedFiles.LogFile l : adopted.logs()) {
      ValueLogFile have = cur.vlogFiles().get(l.file().number());
      if (have == null) {
        added.put(l.file().number(), l.volumePath());
        logs.add(l.file());
      } else if (have.size() != l.file().size()) {
        throw new IllegalArgumentException(
            "value-log number "
                + l.file().number()
                + " names different files in "
                + state.dir
                + " and in the sources ("
                + l.volumePath()
                + "); these shards cannot be combined");
      }
    }
    List<AdoptedFiles.TableFile> tables = adopted.tables();
    List<Integer> l0Order = new ArrayList<>();
    int[] levels = placeAdopted(cur, tables, l0Order);
    long[] numbers = new long[tables.size()];
    for (int i = 0; i < tables.size(); i++) {
      numbers[i] = state.versions.newFileNumber();
      added.put(numbers[i], tables.get(i).volumePath());
    }
    // Registered before the tables open; on disk (EXTERNAL) only once the intent is.
    state.versions.adoptExternal(new ExternalFiles(root, added).locate(reader, state.dir));
    VersionEdit edit = new VersionEdit();
    List<FileMeta> opened = new ArrayList<>();
    List<Long> tableNumbers = new ArrayList<>();
    List<List<FileMeta>> placed = new ArrayList<>();
    PendingExpansion intent = null;
    boolean applying = false;
    try {
      for (int i = 0; i < tables.size(); i++) {
        AdoptedFiles.TableFile t = tables.get(i);
        Table table = state.openTable(numbers[i], levels[i], t.size());
        FileMeta meta = new FileMeta(numbers[i], t.family(), t.size(), t.properties(), table);
        opened.add(meta);
        if (reachesOwned(meta)) {
          // Rows the source holds of buckets this shard owns (given up by the source, not yet
          // compacted away) must not mix with this shard's: such a table is copied without them.
          List<FileMeta> copy =
              compactions.rewriteKeeping(
                  meta, levels[i], state.layouts().byId(t.family()), inRanges(pairs), edit);
          opened.remove(meta);
          table.close();
          opened.addAll(copy);
          placed.add(copy);
          added.remove(numbers[i]);
        } else {
          placed.add(List.of(meta));
        }
        placed.get(i).forEach(f -> tableNumbers.add(f.number()));
      }
      intent =
          new PendingExpansion(
              grown, tableNumbers, new ArrayList<>(added.keySet()), existing.isPresent());
      intent.write(state.dir);
      Map<Long, String> all =
          new LinkedHashMap<>(existing.map(ExternalFiles::files).orElse(Collections.emptyMap()));
      all.putAll(added);
      new ExternalFiles(root, all).write(state.dir);
      logs.forEach(edit::addVlog);
      applying = true;
      install(edit, placed, levels, l0Order, grown);
    } catch (RuntimeException e) {
      if (!applying) {
        for (FileMeta f : opened) {
          f.table().close();
          if (!state.versions.isExternal(f.number())) {
            ShardState.deleteQuietly(state.versions.tablePath(f.number()));
          }
        }
        if (intent != null) {
          intent.rollBack(state.dir);
          PendingExpansion.finish(state.dir);
        }
      }
      // Otherwise the manifest may or may not hold the files: the next open settles it.
      throw e;
    }
    PendingExpansion.finish(state.dir);
  }

  /**
   * Adds the placed tables to {@code edit} at their levels, applies it (durable on return) and then
   * owns the grown ranges. Once this is called, a failure may or may not have installed the files:
   * the next open settles it.
   */
  private void install(
      VersionEdit edit,
      List<List<FileMeta>> placed,
      int[] levels,
      List<Integer> l0Order,
      int[] grown) {
    // Each added L0 file goes in front of L0, so the oldest goes first.
    for (int i = l0Order.size() - 1; i >= 0; i--) {
      List<FileMeta> files = placed.get(l0Order.get(i));
      for (int j = files.size() - 1; j >= 0; j--) {
        edit.add(0, files.get(j));
      }
    }
    for (int i = 0; i < placed.size(); i++) {
      if (levels[i] > 0) {
        for (FileMeta f : placed.get(i)) {
          edit.add(levels[i], f);
        }
      }
    }
    state.mutex.lock();
    try {
      state.versions.apply(edit);
      state.ownership.replace(grown);
      state.changed.signalAll();
    } finally {
      state.mutex.unlock();
    }
  }

  private boolean reachesOwned(FileMeta f) {
    return state.ownership.ownsAnyOf(
        Bytes.getShort(f.smallest(), 0), Bytes.getShort(f.largest(), 0));
  }

  private static IntPredicate inRanges(int[] pairs) {
    return b -> {
      for (int i = 0; i < pairs.length; i += 2) {
        if (b >= pairs[i] && b <= pairs[i + 1]) {
          return true;
        }
      }
      return false;
    };
  }

  /**
   * The level of each adopted table. A source's L0 tables go to L0; each deeper source level, in
   * order, to the shallowest level below the one before it where its tables overlap no file. A
   * source that does not fit goes to L0 whole. {@code l0Order} receives the L0 ones newest first.
   */
  private int[] placeAdopted(
      Version v, List<AdoptedFiles.TableFile> tables, List<Integer> l0Order) {
    int maxLevels = state.config.maxLevels();
    Map<Integer, List<List<byte[][]>>> takenByFamily = new HashMap<>();
    Map<Long, List<Integer>> groups = new TreeMap<>();
    for (int i = 0; i < tables.size(); i++) {
      AdoptedFiles.TableFile t = tables.get(i);
      groups.computeIfAbsent(((long) t.family() << 32) | t.source(), k -> new ArrayList<>()).add(i);
    }
    int[] out = new int[tables.size()];
    for (List<Integer> group : groups.values()) {
      int fam = tables.get(group.get(0)).family();
      List<List<byte[][]>> taken =
          takenByFamily.computeIfAbsent(fam, f -> takenSpans(v, f, maxLevels));
      TreeMap<Integer, List<Integer>> bySourceLevel = new TreeMap<>();
      for (int i : group) {
        bySourceLevel.computeIfAbsent(tables.get(i).level(), k -> new ArrayList<>()).add(i);
      }
      Map<Integer, Integer> mapping = new HashMap<>();
      int previous = 0;
      boolean fits = true;
      for (Map.Entry<Integer, List<Integer>> e : bySourceLevel.entrySet()) {
        if (e.getKey() == 0) {
          mapping.put(0, 0);
          continue;
        }
        int level = previous + 1;
        while (level < maxLevels && overlapsAny(taken.get(level), tables, e.getValue())) {
          level++;
        }
        if (level >= maxLevels) {
          fits = false;
          break;
        }
        mapping.put(e.getKey(), level);
        previous = level;
      }
      for (Map.Entry<Integer, List<Integer>> e : bySourceLevel.entrySet()) {
        for (int i : e.getValue()) {
          out[i] = fits ? mapping.get(e.getKey()) : 0;
          if (out[i] == 0) {
            l0Order.add(i);
          } else {
            AdoptedFiles.TableFile t = tables.get(i);
            taken
                .get(out[i])
                .add(new byte[][] {t.properties().smallest(), t.properties().largest()});
          }
        }
      }
    }
    return out;
  }

  /** Key spans of the files of family {@code fam} per level. */
  private static List<List<byte[][]>> takenSpans(Version v, int fam, int maxLevels) {
    List<List<byte[][]>> out = new ArrayList<>();
    for (int level = 0; level < maxLevels; level++) {
      List<byte[][]> spans = new ArrayList<>();
      if (fam < v.trees().size() && level < v.tree(fam).levelCount()) {
        for (FileMeta f : v.tree(fam).level(level)) {
          spans.add(new byte[][] {f.smallest(), f.largest()});
        }
      }
      out.add(spans);
    }
    return out;
  }

  private static boolean overlapsAny(
      List<byte[][]> taken, List<AdoptedFiles.TableFile> tables, List<Integer> group) {
    for (int i : group) {
      byte[] lo = tables.get(i).properties().smallest();
      byte[] hi = tables.get(i).properties().largest();
      for (byte[][] s : taken) {
        if (Bytes.compare(s[1], lo) >= 0 && Bytes.compare(s[0], hi) <= 0) {
          return true;
        }
      }
    }
    return false;
  }
}
