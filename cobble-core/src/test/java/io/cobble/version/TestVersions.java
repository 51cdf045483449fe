package io.cobble.version;

import io.cobble.memtable.MemTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Builds versions for tests outside this package, which cannot reach the constructor. */
public final class TestVersions {

  private TestVersions() {}

  /** A version with one tree of the given levels, {@code active} as its only memtable. */
  public static Version oneTree(MemTable active, List<List<FileMeta>> levels) {
    List<Tree> trees = new ArrayList<>();
    trees.add(new Tree(levels));
    return new Version(
        null, active, new ArrayList<>(), trees, Collections.emptyMap(), Collections.emptyMap());
  }
}
