package io.cobble.compaction;

import io.cobble.Config;
import io.cobble.version.FileMeta;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Splits one merge into key ranges that run in parallel, each written to its own files. A merge of
 * L0 into L1 rewrites every L1 file its inputs overlap, and when keys are spread evenly that is the
 * whole level: one thread then does all of the tree's compaction while writers wait for it. The
 * ranges are cut at the smallest keys of output-level files, so each output-level file is read by
 * exactly one part and the parts read about the same bytes of that level; the inputs are read by
 * every part they overlap, from the part's first key.
 */
public final class CompactionSplit {
  private CompactionSplit() {}

  /**
   * Parts for {@code c}: {@code compaction.subcompactions} (at most {@code compaction.threads})
   * when writers wait for the merge, else 1. Writers wait on a manual compaction, and soon on an L0
   * merge once L0 holds half the write-stall limit in files. Otherwise one thread merges: a merge
   * that ends sooner starts the next one with fewer L0 files, and every L0 merge rewrites the L1
   * files they overlap, so splitting a merge that keeps up only adds rewrites (under a CPU-bound
   * map write, 22 % fewer writes per second).
   */
  public static int parts(Compaction c, boolean manual, Config config) {
    int backlog = Math.max(2 * config.l0FileLimit(), config.writeStallLimit() / 2);
    boolean waitedFor = manual || (c.inputLevel() == 0 && c.inputs().size() >= backlog);
    return waitedFor ? Math.min(config.subcompactions(), config.compactionThreads()) : 1;
  }

  /**
   * At most {@code parts} parts that together cover {@code c}; {@code c} itself when it is not a
   * merge or its output level offers fewer than two files to cut between.
   */
  public static List<Compaction> of(Compaction c, int parts) {
    List<FileMeta> level = c.overlaps();
    if (parts < 2 || c.kind() != Compaction.Kind.MERGE || level.size() < 2) {
      return Collections.singletonList(c);
    }
    long total = 0;
    for (FileMeta f : level) {
      total += f.size();
    }
    List<Compaction> out = new ArrayList<>(parts);
    byte[] from = null;
    long before = 0;
    for (int i = 1; i < level.size() && out.size() < parts - 1; i++) {
      before += level.get(i - 1).size();
      // Cut before file i once the files before it hold this part's share of the level.
      if (before * parts >= total * (out.size() + 1)) {
        byte[] to = level.get(i).smallest();
        out.add(c.part(from, to));
        from = to;
      }
    }
    out.add(c.part(from, null));
    return out;
  }
}
